import { afterEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { DatabaseUnavailableError } from "./errors.ts";
import { pingDatabase } from "./pingDatabase.ts";

let open: TestDatabase[] = [];
afterEach(async () => {
  await Promise.all(open.map((test) => test.cleanup()));
  open = [];
});

describe("pingDatabase", () => {
  test("default", async () => {
    const test = await createTestDatabase();
    open.push(test);
    await expect(pingDatabase(test.database)).resolves.toBeUndefined();
  });

  test("error: closed database", async () => {
    const test = await createTestDatabase();
    open.push(test);
    await test.database.close();
    const error = await pingDatabase(test.database).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as DatabaseUnavailableError).shortMessage).toMatch(
      new RegExp(`^${test.database.label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is unreachable: `),
    );
  });

  test("args: timeoutMs", async () => {
    const test = await createTestDatabase();
    open.push(test);
    const { database } = test;
    // Hold the only PGlite connection, or every PostgreSQL pool slot, so `select 1` has to wait.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holders: Promise<unknown>[] = [];
    if (database.kind === "pglite") {
      holders.push(database.client.runExclusive(() => held));
    } else {
      const size = database.pool.options.max ?? 10;
      for (let i = 0; i < size; i++)
        holders.push(database.pool.connect().then((client) => held.then(() => client.release())));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const started = Date.now();
    await expect(pingDatabase(database, { timeoutMs: 300 })).rejects.toThrow(
      `${database.label} did not answer within 300 ms`,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    release();
    await Promise.all(holders);
    await expect(pingDatabase(database)).resolves.toBeUndefined();
  });
});
