import { and, eq } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../../test/helpers/db.ts";
import { DEMO, ROUTER, USDC } from "../decode/_test/testRegistry.ts";
import { ALICE, BOB, swapTransaction } from "../realtime/_test/fixtures.ts";
import { type CommitInput, commitBatch } from "./commitBatch.ts";
import type { Db } from "./createDatabase.ts";
import { encodeCommitRows } from "./encodeCommitRows.ts";
import { BlockHashConflictError, StoredBlocksUnverifiedError } from "./errors.ts";
import { INGEST_LOCK_KEY } from "./ingestTransaction.ts";
import { removeBlocks } from "./removeBlocks.ts";
import {
  addressTransactions,
  blocks,
  indexerCursor,
  logs,
  tokenBalances,
  tokenTransfers,
  transactions,
} from "./schema.ts";

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

describe("commitBatch: a polling commit's span", () => {
  const span = (from: number, to: number, verified?: Map<number, string>) => ({
    span: { from, to, ...(verified ? { verified } : {}) },
  });

  test("behavior: a block stored in the span that the commit does not bring fails it until verified", async () => {
    await commitBatch(db, batch("webhook", [header(52, hash("52"))]));
    const error = await commitBatch(db, {
      ...batch("poll", [header(51, hash("51")), header(53, hash("53"))], 53),
      ...span(50, 53),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoredBlocksUnverifiedError);
    expect(error).toMatchObject({ blocks: [{ number: 52, hash: hash("52") }] });
    // Nothing of it is stored: neither its headers nor its cursor.
    expect(await storedHash(51)).toBeUndefined();
    expect(await db.select().from(indexerCursor)).toEqual([]);

    // Read from the chain and found canonical, the block is vouched for, and the commit goes through.
    await commitBatch(db, {
      ...batch("poll", [header(51, hash("51")), header(53, hash("53"))], 53),
      ...span(50, 53, new Map([[52, hash("52")]])),
    });
    expect([await storedHash(51), await storedHash(52), await storedHash(53)]).toEqual([
      hash("51"),
      hash("52"),
      hash("53"),
    ]);
    expect((await db.select().from(indexerCursor))[0]?.blockNumber).toBe(53);
  });

  test("behavior: a header stored under another hash, or a verified block that differs, is named too", async () => {
    await commitBatch(db, batch("webhook", [header(61, hash("aa")), header(62, hash("62"))]));
    const error = await commitBatch(db, {
      ...batch("poll", [header(61, hash("61"))], 62),
      ...span(60, 62, new Map([[62, hash("bb")]])),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoredBlocksUnverifiedError);
    expect(error).toMatchObject({
      blocks: [
        { number: 61, hash: hash("aa") },
        { number: 62, hash: hash("62") },
      ],
    });
  });

  test("default: blocks stored outside the span do not matter", async () => {
    await commitBatch(db, batch("webhook", [header(70, hash("70")), header(74, hash("74"))]));
    await commitBatch(db, { ...batch("poll", [header(72, hash("72"))], 73), ...span(71, 73) });
    expect((await db.select().from(indexerCursor))[0]?.blockNumber).toBe(73);
  });
});

describe("commitBatch: rows encoded ahead", () => {
  test("default: a commit of encoded rows stores what one encoding them itself does", async () => {
    await removeBlocks(db, { after: -1 }, new Set());
    const first = swapTransaction({
      hash: hash("f1") as `0x${string}`,
      blockHash: hash("b8") as `0x${string}`,
      blockNumber: 80,
      transactionIndex: 0,
    });
    const second = swapTransaction({
      hash: hash("f2") as `0x${string}`,
      blockHash: hash("b9") as `0x${string}`,
      blockNumber: 81,
      transactionIndex: 3,
    });
    const deltaTokens = new Set([DEMO.toLowerCase(), USDC.toLowerCase()]);
    const input = (t: typeof first, number: number): CommitInput => ({
      source: "poll",
      transactions: [t],
      blocks: [header(number, t.blockHash)],
      deltaTokens,
    });
    const encoded = encodeCommitRows(db, [second], "poll");
    expect(encoded === undefined).toBe(testDb.database.kind === "postgres");
    await commitBatch(db, input(first, 80));
    await commitBatch(db, { ...input(second, 81), encoded });

    const rowsOf = async (txHash: string) => ({
      transaction: await db.select().from(transactions).where(eq(transactions.hash, txHash)),
      logs: await db.select().from(logs).where(eq(logs.txHash, txHash)).orderBy(logs.logIndex),
      transfers: await db
        .select()
        .from(tokenTransfers)
        .where(eq(tokenTransfers.txHash, txHash))
        .orderBy(tokenTransfers.logIndex),
      parties: await db
        .select()
        .from(addressTransactions)
        .where(eq(addressTransactions.txHash, txHash))
        .orderBy(addressTransactions.address),
    });
    // The same rows but for the keys, the block and the time they were stored.
    const comparable = (rows: Awaited<ReturnType<typeof rowsOf>>) =>
      JSON.stringify(rows, (key, value) =>
        ["hash", "txHash", "blockNumber", "transactionIndex", "storedAt", "blockHash"].includes(key)
          ? undefined
          : typeof value === "bigint"
            ? value.toString()
            : value,
      );
    const [a, b] = [await rowsOf(first.hash), await rowsOf(second.hash)];
    expect(a.transaction).toHaveLength(1);
    expect(b.logs.map((l) => l.logIndex)).toEqual([0, 1]);
    expect(comparable(b)).toBe(comparable(a));
    // Both moved the balances: two swaps of 1 DEMO from Alice.
    const [alice] = await db
      .select()
      .from(tokenBalances)
      .where(and(eq(tokenBalances.holder, ALICE), eq(tokenBalances.tokenAddress, DEMO.toLowerCase())));
    expect(alice?.balance).toBe(-2n * 10n ** 18n);
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
