import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../../test/helpers/db.ts";
import { createLogger, createSilentLogger } from "../internal/logger.ts";
import { createDatabase } from "./createDatabase.ts";
import { DatabaseUnavailableError } from "./errors.ts";
import { migrate } from "./migrate.ts";
import { blocks, logs, tokenBalances, transactions, webhookInbox } from "./schema.ts";

const logger = createSilentLogger();
const MAX_UINT256 = 2n ** 256n - 1n;

let open: TestDatabase[] = [];
async function testDatabase(): Promise<TestDatabase> {
  const test = await createTestDatabase();
  open.push(test);
  return test;
}
afterEach(async () => {
  await Promise.all(open.map((test) => test.cleanup()));
  open = [];
});

describe("createDatabase", () => {
  test("default", async () => {
    const database = await createDatabase({ logger });
    try {
      expect(database.kind).toBe("pglite");
      expect(database.label).toBe("pglite:memory://");
      const result = await database.db.execute<{ answer: number }>(sql`select 40 + 2 as answer`);
      expect(result.rows).toEqual([{ answer: 42 }]);
      // memory:// keeps PostgreSQL's buffer pool: its files live in the process (docs/performance.md, "Memory").
      const pool = await database.db.execute<{ shared_buffers: string }>(sql`show shared_buffers`);
      expect(pool.rows).toEqual([{ shared_buffers: "128MB" }]);
    } finally {
      await database.close();
    }
  });

  test("args: databaseUrl selects PostgreSQL with protoscan's session settings", async (context) => {
    const { database } = await testDatabase();
    if (testDatabaseUrl() === undefined) {
      expect(database.kind).toBe("pglite");
      context.skip();
    }
    expect(database.kind).toBe("postgres");
    const result = await database.db.execute<{ app: string; timeout: string; tz: string }>(
      sql`select current_setting('application_name') as app, current_setting('statement_timeout') as timeout,
          current_setting('TimeZone') as tz`,
    );
    expect(result.rows).toEqual([{ app: "protoscan", timeout: "30s", tz: "UTC" }]);
    if (database.kind === "postgres") {
      expect(database.pool.options.max).toBe(5);
      // Statements sent together are pipelined, not queued (node-postgres' queue goes in pg@9): see
      // sendTogether.test.ts for what a transaction does with them.
      const client = await database.pool.connect();
      try {
        expect(client.pipeline).toBe(true);
      } finally {
        client.release();
      }
    }
  });

  test("behavior: uint256, timestamps, jsonb and arrays round-trip exactly", async () => {
    const { database } = await testDatabase();
    const { db } = database;
    const timestamp = new Date("2026-11-21T08:00:00.123Z");
    const args = {
      amountIn: MAX_UINT256.toString(),
      path: ["0xaa", "0xbb"],
      nested: { ok: true, n: 1.5 },
      s: "é€😀",
    };
    await db.insert(transactions).values({
      hash: `0x${"ab".repeat(32)}`,
      blockNumber: 2 ** 40,
      blockHash: `0x${"cd".repeat(32)}`,
      transactionIndex: 3,
      blockTimestamp: timestamp,
      fromAddress: "0x00000000000000000000000000000000000000aa",
      toAddress: null,
      valueWei: MAX_UINT256,
      gasUsed: 21_000n,
      gasPrice: 0n,
      status: true,
      protocol: "demoswap",
      actionType: "swap",
      functionName: "swapExactTokensForTokens",
      functionArgs: args,
      source: "poll",
    });
    const [row] = await db.select().from(transactions);
    expect(row?.valueWei).toBe(MAX_UINT256);
    expect(typeof row?.valueWei).toBe("bigint");
    expect(row?.gasUsed).toBe(21_000n);
    expect(row?.gasPrice).toBe(0n);
    expect(row?.blockNumber).toBe(2 ** 40);
    expect(row?.blockTimestamp).toBeInstanceOf(Date);
    expect(row?.blockTimestamp.toISOString()).toBe("2026-11-21T08:00:00.123Z");
    expect(row?.functionArgs).toEqual(args);
    expect(row?.toAddress).toBeNull();
    expect(row?.storedAt).toBeInstanceOf(Date);
    expect(Math.abs((row?.storedAt.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);

    await db.insert(logs).values({
      txHash: `0x${"ab".repeat(32)}`,
      logIndex: 0,
      blockNumber: 1,
      transactionIndex: 0,
      address: "0x00000000000000000000000000000000000000bb",
      topics: [`0x${"11".repeat(32)}`, `0x${"22".repeat(32)}`],
      data: "0x",
      eventName: null,
      eventArgs: null,
    });
    const [log] = await db.select().from(logs);
    expect(log?.topics).toEqual([`0x${"11".repeat(32)}`, `0x${"22".repeat(32)}`]);
    expect(log?.eventArgs).toBeNull();

    // Arithmetic stays exact in SQL, and the result maps back to a bigint.
    await db.insert(tokenBalances).values({
      tokenAddress: "0x00000000000000000000000000000000000000cc",
      holder: "0x00000000000000000000000000000000000000dd",
      balance: MAX_UINT256 - 1n,
      blockNumber: 7,
    });
    const [sum] = await db
      .select({ total: sql<string>`${tokenBalances.balance} + 1` })
      .from(tokenBalances)
      .where(eq(tokenBalances.blockNumber, 7));
    expect(BigInt(sum?.total ?? "0")).toBe(MAX_UINT256);
  });

  test("behavior: raw results have the same JS types on both drivers", async () => {
    const { database } = await testDatabase();
    const result = await database.db.execute<Record<string, unknown>>(
      sql`select 5::int8 as i8, 7::int4 as i4, 1.5::float8 as f8, ${MAX_UINT256.toString()}::numeric(78,0) as n,
          true as b, '{"a":[1,"2"]}'::jsonb as j, '2026-11-21T08:00:00.123Z'::timestamptz as t,
          array['x','y']::text[] as arr`,
    );
    expect(result.rows).toEqual([
      {
        i8: "5",
        i4: 7,
        f8: 1.5,
        n: MAX_UINT256.toString(),
        b: true,
        j: { a: [1, "2"] },
        // Drizzle leaves timestamptz as PostgreSQL's text on raw queries; sessions run in UTC on both.
        t: "2026-11-21 08:00:00.123+00",
        arr: ["x", "y"],
      },
    ]);
  });

  test("behavior: bigserial ids and defaults", async () => {
    const { database } = await testDatabase();
    const inserted = await database.db
      .insert(webhookInbox)
      .values([
        { provider: "alchemy", deliveryId: "a", rawBody: "{}" },
        { provider: "alchemy", deliveryId: "b", rawBody: "{}" },
      ])
      .returning();
    expect(inserted.map((row) => [row.id, row.status, row.attempts])).toEqual([
      [1, "pending", 0],
      [2, "pending", 0],
    ]);
  });

  test("behavior: a PGlite data dir persists across close and reopen", async () => {
    const dir = path.join(await mkdtemp(path.join(tmpdir(), "protoscan-store-")), "nested", "data");
    try {
      const first = await createDatabase({ dataDir: dir, logger });
      expect(first.label).toBe(`pglite:${dir}`);
      expect((await stat(dir)).isDirectory()).toBe(true);
      const pool = await first.db.execute<{ shared_buffers: string }>(sql`show shared_buffers`);
      expect(pool.rows).toEqual([{ shared_buffers: "8MB" }]);
      const zero = await first.db.execute<{ wal_init_zero: string }>(sql`show wal_init_zero`);
      expect(zero.rows).toEqual([{ wal_init_zero: "off" }]);
      await migrate(first);
      await first.db.insert(blocks).values({
        number: 12,
        hash: `0x${"12".repeat(32)}`,
        parentHash: `0x${"11".repeat(32)}`,
        timestamp: new Date("2026-01-01T00:00:00.001Z"),
      });
      await first.close();
      await first.close();

      const second = await createDatabase({ dataDir: dir, logger });
      try {
        expect(await migrate(second)).toEqual({ applied: 0 });
        const rows = await second.db.select().from(blocks);
        expect(rows).toEqual([
          {
            number: 12,
            hash: `0x${"12".repeat(32)}`,
            parentHash: `0x${"11".repeat(32)}`,
            timestamp: new Date("2026-01-01T00:00:00.001Z"),
          },
        ]);
      } finally {
        await second.close();
      }
    } finally {
      await rm(path.dirname(path.dirname(dir)), { recursive: true, force: true });
    }
  });

  test("error: the database URL never appears in the error or the logs", async () => {
    const url = "postgres://user:secretpw@127.0.0.1:1/x";
    const lines: string[] = [];
    const capture = createLogger({ level: "debug", destination: { write: (line) => lines.push(line) } });
    const error = await createDatabase({ databaseUrl: url, logger: capture }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    const text = JSON.stringify(error, Object.getOwnPropertyNames(error instanceof Error ? error : {}));
    const all = `${String(error)}\n${text}\n${(error as Error).stack}\n${String((error as Error).cause)}\n${lines.join("")}`;
    expect(all).not.toContain("secretpw");
    expect(all).not.toContain(url);
    expect((error as DatabaseUnavailableError).shortMessage).toBe(
      "could not connect to PostgreSQL at postgres://***@127.0.0.1:1/x: connect ECONNREFUSED 127.0.0.1:1",
    );
    expect((error as Error & { cause: { code?: string } }).cause.code).toBe("ECONNREFUSED");
  });

  test("error: a malformed URL is not quoted either", async () => {
    const url = "postgres://user:secret pw@[bad/x";
    const error = await createDatabase({ databaseUrl: url, logger }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    const cause = (error as Error).cause as Error;
    const all = `${String(error)}\n${(error as Error).stack}\n${cause.message}\n${cause.stack}\n${JSON.stringify(cause)}`;
    expect(all).not.toContain("secret");
  });
});
