import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { createSilentLogger } from "../internal/logger.ts";
import { upsertReadings } from "./balanceWrites.ts";
import { type ChangeNotice, type ChangeNotices, listenForChanges } from "./changeNotices.ts";

const TOKEN = `0x${"1".repeat(40)}` as const;
const HOLDER = `0x${"2".repeat(40)}` as const;

describe("listenForChanges", () => {
  let tdb: TestDatabase;
  let notices: ChangeNotices;
  const heard: ChangeNotice[] = [];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    notices = await listenForChanges(tdb.database, {
      logger: createSilentLogger(),
      pingIntervalMs: 200,
      reconnectDelayMs: 100,
    });
    notices.subscribe((notice) => heard.push(notice));
  });
  afterAll(async () => {
    await notices?.close();
    await tdb?.cleanup();
  });

  /** Run `write` and wait until a notice of `table` arrives after it; returns the notices heard meanwhile. */
  const noticesOf = async (write: () => Promise<unknown>, table: ChangeNotice) => {
    const from = heard.length;
    await write();
    await vi.waitFor(() => expect(heard.slice(from)).toContain(table), { timeout: 10_000 });
    return heard.slice(from);
  };

  test("default: a committed balance write is heard as token_balances", async () => {
    expect(notices.listening()).toBe(true);
    const got = await noticesOf(
      () => upsertReadings(tdb.database.db, [{ token: TOKEN, holder: HOLDER, balance: 5n, blockNumber: 1 }]),
      "token_balances",
    );
    expect(got.filter((n) => n !== "*")).toEqual(["token_balances"]);
  });

  test("behavior: a cursor write is heard as indexer_cursor", async () => {
    const got = await noticesOf(
      () =>
        tdb.database.db.execute(
          sql`insert into indexer_cursor (name, block_number, filter_hash) values ('main', 7, 'x')
              on conflict (name) do update set block_number = excluded.block_number`,
        ),
      "indexer_cursor",
    );
    expect(got.filter((n) => n !== "*")).toEqual(["indexer_cursor"]);
  });

  test("behavior: a rolled-back balance write is not heard", async () => {
    const got = await noticesOf(async () => {
      await tdb.database.db
        .transaction(async (tx) => {
          await upsertReadings(tx, [{ token: TOKEN, holder: HOLDER, balance: 9n, blockNumber: 2 }]);
          throw new Error("roll back");
        })
        .catch(() => undefined);
      // A committed write after it: once its notice is heard, the rolled-back one would have been too.
      await tdb.database.db.execute(sql`update indexer_cursor set block_number = 8 where name = 'main'`);
    }, "indexer_cursor");
    expect(got).not.toContain("token_balances");
  });

  test("behavior: a lost session is announced with '*', then listened to again (PostgreSQL)", async (ctx) => {
    if (tdb.database.kind !== "postgres") return ctx.skip();
    const from = heard.length;
    await tdb.database.db.execute(
      sql`select pg_terminate_backend(pid) from pg_stat_activity
          where application_name = 'protoscan-api-changes' and datname = current_database()`,
    );
    await vi.waitFor(() => expect(heard.slice(from)).toContain("*"), { timeout: 10_000 });
    await vi.waitFor(() => expect(notices.listening()).toBe(true), { timeout: 10_000 });
    await noticesOf(
      () => upsertReadings(tdb.database.db, [{ token: TOKEN, holder: HOLDER, balance: 6n, blockNumber: 3 }]),
      "token_balances",
    );
  });

  test("behavior: pinging for long adds no listener per ping (PostgreSQL)", async (ctx) => {
    if (tdb.database.kind !== "postgres") return ctx.skip();
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    const busy = await listenForChanges(tdb.database, { logger: createSilentLogger(), pingIntervalMs: 2 });
    try {
      // Far more pings than Node's default of 10 listeners per event target.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(busy.listening()).toBe(true);
    } finally {
      await busy.close();
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });
});
