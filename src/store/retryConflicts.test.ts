import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import type { Db } from "./createDatabase.ts";
import { isTransactionConflict } from "./errors.ts";
import { retryConflicts } from "./retryConflicts.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.database.db;
  await db.execute(sql`create table conflict_probe (id int primary key, n int not null)`);
  await db.execute(sql`insert into conflict_probe values (1, 0), (2, 0)`);
});

afterAll(async () => {
  await testDb?.cleanup();
});

describe("retryConflicts", () => {
  test("behavior: two transactions locking two rows in opposite orders both commit (a deadlock is retried)", async () => {
    // Each takes its first row, waits until the other has taken its own (or 300 ms: PGlite runs one
    // transaction at a time), then takes the other row: on PostgreSQL one of them is aborted with 40P01.
    let arrived = 0;
    const barrier = async () => {
      arrived++;
      for (let waited = 0; arrived < 2 && waited < 300; waited += 10) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    const seen: unknown[] = [];
    const crosswise = (first: number, second: number) => () =>
      db
        .transaction(async (tx) => {
          await tx.execute(sql`update conflict_probe set n = n + 1 where id = ${first}`);
          await barrier();
          await tx.execute(sql`update conflict_probe set n = n + 1 where id = ${second}`);
        })
        .catch((error: unknown) => {
          seen.push(error);
          throw error;
        });
    await Promise.all([retryConflicts(crosswise(1, 2)), retryConflicts(crosswise(2, 1))]);
    const rows = await db.execute<{ id: number; n: number }>(
      sql`select id, n from conflict_probe order by id`,
    );
    expect(rows.rows.map((r) => [Number(r.id), Number(r.n)])).toEqual([
      [1, 2],
      [2, 2],
    ]);
    // PostgreSQL did abort one of them (PGlite runs one transaction at a time: nothing to abort), and every
    // failed attempt was a conflict.
    if (testDb.database.kind === "postgres") expect(seen.length).toBeGreaterThan(0);
    expect(seen.every(isTransactionConflict)).toBe(true);
  });

  test("error: any other failure is thrown at once, not retried", async () => {
    let attempts = 0;
    const failing = retryConflicts(async () => {
      attempts++;
      throw new Error("not a conflict");
    });
    await expect(failing).rejects.toThrow("not a conflict");
    expect(attempts).toBe(1);
  });
});
