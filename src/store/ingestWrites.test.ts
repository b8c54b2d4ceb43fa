import { eq } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../../test/helpers/db.ts";
import { DEMO, ROUTER, USDC } from "../decode/testRegistry.ts";
import { ALICE, BOB, swapTransaction } from "../realtime/_test/fixtures.ts";
import type { Db } from "./createDatabase.ts";
import { BlockHashConflictError } from "./errors.ts";
import { type CommitInput, commitBatch, INGEST_LOCK_KEY, removeBlocks } from "./ingestWrites.ts";
import { blocks, indexerCursor, tokenBalances, tokenTransfers } from "./schema.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.database.db;
});

beforeEach(async () => {
  await db.delete(blocks);
  await db.delete(indexerCursor);
});

afterAll(async () => {
  await testDb?.cleanup();
});

const hash = (byte: string) => `0x${byte.repeat(32)}`;
const header = (number: number, h: string) => ({
  number,
  hash: h,
  parentHash: hash("00"),
  timestamp: new Date(1_700_000_000_000 + number * 12_000),
});
const batch = (
  source: CommitInput["source"],
  headers: CommitInput["blocks"],
  cursor?: number,
): CommitInput => ({
  source,
  transactions: [],
  blocks: headers,
  deltaTokens: new Set(),
  ...(cursor !== undefined ? { cursor: { name: "poll", blockNumber: cursor, filterHash: "f" } } : {}),
});
const storedHash = async (number: number) =>
  (await db.select({ hash: blocks.hash }).from(blocks).where(eq(blocks.number, number)))[0]?.hash;

describe("commitBatch: block headers", () => {
  test("behavior: a track-tx or webhook commit never replaces a header stored under another hash", async () => {
    await commitBatch(db, batch("poll", [header(10, hash("aa"))], 10));
    for (const source of ["track", "webhook"] as const) {
      const error = await commitBatch(
        db,
        batch(source, [header(11, hash("cc")), header(10, hash("bb"))]),
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BlockHashConflictError);
      expect(error).toMatchObject({ blockNumber: 10 });
    }
    // Nothing of the refused commits is stored: the header stays, block 11 did not come in either.
    expect(await storedHash(10)).toBe(hash("aa"));
    expect(await storedHash(11)).toBeUndefined();
  });

  test("default: a track-tx commit of a header already stored with the same hash, or of a new one", async () => {
    await commitBatch(db, batch("track", [header(20, hash("aa"))]));
    await commitBatch(db, batch("webhook", [header(20, hash("aa")), header(21, hash("bb"))]));
    expect(await storedHash(20)).toBe(hash("aa"));
    expect(await storedHash(21)).toBe(hash("bb"));
  });

  test("behavior: a polling commit is refused too, cursor and all: polling rolls the orphaned block back first", async () => {
    await commitBatch(db, batch("poll", [header(29, hash("11"))], 29));
    await commitBatch(db, batch("track", [header(30, hash("aa"))]));
    const error = await commitBatch(
      db,
      batch("poll", [header(30, hash("bb")), header(31, hash("cc"))], 31),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlockHashConflictError);
    expect(error).toMatchObject({ blockNumber: 30 });
    expect(await storedHash(30)).toBe(hash("aa"));
    expect(await storedHash(31)).toBeUndefined();
    expect((await db.select().from(indexerCursor))[0]?.blockNumber).toBe(29);

    await removeBlocks(db, { numbers: [30] }, new Set());
    await commitBatch(db, batch("poll", [header(30, hash("bb")), header(31, hash("cc"))], 31));
    expect([await storedHash(30), await storedHash(31)]).toEqual([hash("bb"), hash("cc")]);
    expect((await db.select().from(indexerCursor))[0]?.blockNumber).toBe(31);
  });
});

describe("commitBatch: balance deltas", () => {
  test("behavior: only the transfer rows the commit inserted move balances", async () => {
    await removeBlocks(db, { after: -1 }, new Set());
    await db.delete(tokenBalances);
    const tx = swapTransaction({
      hash: hash("e1") as `0x${string}`,
      blockNumber: 40,
      blockHash: hash("b4") as `0x${string}`,
    });
    // A row of its first transfer (1 DEMO, Alice -> router) is there already, as if left behind.
    const [demo] = tx.transfers;
    await db.insert(tokenTransfers).values({
      txHash: tx.hash.toLowerCase(),
      logIndex: demo!.logIndex,
      blockNumber: 40,
      transactionIndex: 0,
      blockTimestamp: tx.blockTimestamp,
      tokenAddress: demo!.token.toLowerCase(),
      fromAddress: demo!.from.toLowerCase(),
      toAddress: demo!.to.toLowerCase(),
      amount: demo!.amount,
    });
    const { inserted } = await commitBatch(db, {
      source: "poll",
      transactions: [tx],
      blocks: [header(40, hash("b4"))],
      deltaTokens: new Set([DEMO.toLowerCase(), USDC.toLowerCase()]),
    });
    expect(inserted.map((t) => t.hash)).toEqual([tx.hash]);
    const balances = await db
      .select()
      .from(tokenBalances)
      .orderBy(tokenBalances.tokenAddress, tokenBalances.holder);
    // The USDC transfer (2 USDC, router -> Bob) was inserted and counts; the DEMO one was not, and does not.
    expect(balances.map((b) => [b.tokenAddress, b.holder, b.balance])).toEqual(
      [
        [USDC.toLowerCase(), BOB, 2_000_000n],
        [USDC.toLowerCase(), ROUTER.toLowerCase(), -2_000_000n],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1]))),
    );
    expect(balances.some((b) => b.holder === ALICE)).toBe(false);
  });
});

describe.skipIf(testDatabaseUrl() === undefined)("ingest writes: one at a time across connections", () => {
  // A rollback and a track-tx/webhook commit from another connection must not interleave statement by
  // statement (READ COMMITTED): each takes the ingest lock first, so another holder makes both wait.
  test("behavior: commitBatch and removeBlocks wait while another session holds the ingest lock", async () => {
    const other = new pg.Client({ connectionString: testDb.url });
    await other.connect();
    try {
      await other.query("begin");
      await other.query("select pg_advisory_xact_lock($1::bigint)", [INGEST_LOCK_KEY.toString()]);
      const done: string[] = [];
      const commit = commitBatch(db, batch("track", [header(40, hash("aa"))])).then(() =>
        done.push("commit"),
      );
      const rollback = removeBlocks(db, { after: 100 }, new Set()).then(() => done.push("rollback"));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(done).toEqual([]);
      expect(await storedHash(40)).toBeUndefined();
      await other.query("commit");
      await Promise.all([commit, rollback]);
      expect(done.sort()).toEqual(["commit", "rollback"]);
      expect(await storedHash(40)).toBe(hash("aa"));
    } finally {
      await other.end();
    }
  });
});
