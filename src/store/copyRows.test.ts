import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../../test/helpers/db.ts";
import { canCopyRows, copyRows } from "./copyRows.ts";
import { isUniqueViolation } from "./errors.ts";
import { logs, transactions } from "./schema.ts";

const HASH = `0x${"ab".repeat(32)}`;
const MAX_UINT256 = 2n ** 256n - 1n;
/** Every character COPY's text format gives a meaning, and some JSON and array literals do. */
const AWKWARD = 'tab\there, line\nbreak, cr\r, back\\slash, \\N, "quotes", {braces}, commas, ünïcode 🦄';

function transaction(hash: string, overrides: Partial<typeof transactions.$inferInsert> = {}) {
  return {
    hash,
    blockNumber: 2 ** 40,
    blockHash: `0x${"cd".repeat(32)}`,
    transactionIndex: 3,
    blockTimestamp: new Date("2026-11-21T08:00:00.123Z"),
    fromAddress: "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
    toAddress: null,
    contractAddress: null,
    valueWei: MAX_UINT256,
    gasUsed: 21_000n,
    gasPrice: 0n,
    status: false,
    protocol: "demoswap",
    actionType: AWKWARD,
    functionName: "swap",
    functionArgs: { note: AWKWARD, list: ["1", AWKWARD], nested: { a: null } },
    source: "poll",
    ...overrides,
  } satisfies typeof transactions.$inferInsert;
}

describe("copyRows", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.cleanup();
  });

  test("default: PGlite copies, node-postgres does not", () => {
    expect(canCopyRows(db.database.db)).toBe(db.database.kind === "pglite");
  });

  describe.skipIf(testDatabaseUrl() !== undefined)("on PGlite", () => {
    test("default: every column type round-trips exactly, defaults fill omitted columns", async () => {
      const rows = [
        transaction(HASH),
        transaction(`0x${"ac".repeat(32)}`, { toAddress: "0x01", status: true }),
      ];
      await copyRows(db.database.db, transactions, rows);
      const stored = await db.database.db.select().from(transactions).orderBy(transactions.hash);
      expect(stored.map(({ storedAt, ...rest }) => rest)).toEqual(rows);
      for (const row of stored) expect(row.storedAt).toBeInstanceOf(Date);
    });

    test("behavior: text arrays with awkward elements, empty arrays and null jsonb", async () => {
      const rows = [
        {
          txHash: HASH,
          logIndex: 0,
          blockNumber: 1,
          transactionIndex: 0,
          address: "0x2000000000000000000000000000000000000001",
          topics: [`0x${"11".repeat(32)}`, AWKWARD, "NULL", ""],
          data: AWKWARD,
          eventName: "Transfer",
          eventArgs: { value: "1", memo: AWKWARD },
        },
        {
          txHash: HASH,
          logIndex: 1,
          blockNumber: 1,
          transactionIndex: 0,
          address: "0x2000000000000000000000000000000000000001",
          topics: [],
          data: "0x01",
          eventName: null,
          eventArgs: null,
        },
      ] satisfies (typeof logs.$inferInsert)[];
      await copyRows(db.database.db, logs, rows);
      const stored = await db.database.db
        .select()
        .from(logs)
        .where(eq(logs.txHash, HASH))
        .orderBy(logs.logIndex);
      expect(stored).toEqual(rows);
    });

    test("behavior: a row stored already fails the whole statement with a unique violation, inside a transaction too", async () => {
      const other = `0x${"ef".repeat(32)}`;
      const error = await db.database.db
        .transaction((tx) => copyRows(tx, transactions, [transaction(other), transaction(HASH)]))
        .catch((e: unknown) => e);
      expect(isUniqueViolation(error)).toBe(true);
      expect(await db.database.db.select().from(transactions).where(eq(transactions.hash, other))).toEqual(
        [],
      );
    });

    test("behavior: no rows is no statement", async () => {
      await copyRows(db.database.db, transactions, []);
    });
  });
});
