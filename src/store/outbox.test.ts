import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { ALICE, BOB, swapTransaction } from "../realtime/_test/fixtures.ts";
import { commitBatch } from "./commitBatch.ts";
import type { Db } from "./createDatabase.ts";
import { outboxBounds, pruneOutbox, readEventDetails, readOutboxAfter, writeOutbox } from "./outbox.ts";
import { removeBlocks } from "./removeBlocks.ts";
import { broadcastOutbox } from "./schema.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.database.db;
});

beforeEach(async () => {
  await removeBlocks(db, { after: -1 }, new Set());
  await db.delete(broadcastOutbox);
});

afterAll(async () => {
  await testDb?.cleanup();
});

const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as `0x${string}`;
const blockHash = (n: number) => `0x${(1000 + n).toString(16).padStart(64, "0")}` as `0x${string}`;
const tx = (n: number, block: number, index = 0) =>
  swapTransaction({
    hash: hash(n),
    blockNumber: block,
    blockHash: blockHash(block),
    transactionIndex: index,
  });
const header = (block: number) => ({
  number: block,
  hash: blockHash(block),
  parentHash: blockHash(block - 1),
  timestamp: new Date("2026-11-21T08:00:00.000Z"),
});

describe("writeOutbox through commitBatch", () => {
  test("default: one row per stored transaction, in block order, only with `outbox`", async () => {
    const { newest: before } = await outboxBounds(db);
    await commitBatch(db, {
      source: "poll",
      transactions: [tx(2, 11), tx(1, 10, 1), tx(3, 10, 0)],
      blocks: [header(10), header(11)],
      deltaTokens: new Set(),
      outbox: true,
    });
    const rows = await readOutboxAfter(db, before, 100);
    expect(rows.map((r) => [r.kind, r.txHash, r.blockNumber, r.blockHash])).toEqual([
      ["transaction", hash(3), 10, blockHash(10)],
      ["transaction", hash(1), 10, blockHash(10)],
      ["transaction", hash(2), 11, blockHash(11)],
    ]);
    expect(rows.map((r) => r.seq)).toEqual([...rows.map((r) => r.seq)].sort((a, b) => a - b));
    expect(rows.every((r) => r.detail === null)).toBe(true);

    // A second ingestion of the same hashes stores nothing, so it announces nothing; without `outbox` either.
    await commitBatch(db, {
      source: "webhook",
      transactions: [tx(2, 11)],
      blocks: [header(11)],
      deltaTokens: new Set(),
      outbox: true,
    });
    await commitBatch(db, {
      source: "poll",
      transactions: [tx(4, 12)],
      blocks: [header(12)],
      deltaTokens: new Set(),
    });
    expect(await readOutboxAfter(db, before, 100)).toHaveLength(3);
  });

  test("behavior: rows written in a transaction that rolls back are not kept", async () => {
    const { newest: before } = await outboxBounds(db);
    await expect(
      db.transaction(async (trx) => {
        await writeOutbox(trx, [
          { kind: "transaction", txHash: hash(5), blockNumber: 20, blockHash: blockHash(20) },
        ]);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await readOutboxAfter(db, before, 100)).toEqual([]);
  });
});

describe("writeOutbox through removeBlocks", () => {
  test("default: a `removed` row per removed transaction, with what its topics need", async () => {
    await commitBatch(db, {
      source: "poll",
      transactions: [tx(7, 30), tx(8, 31)],
      blocks: [header(30), header(31)],
      deltaTokens: new Set(),
      outbox: true,
    });
    const { newest: before } = await outboxBounds(db);
    const { removed } = await removeBlocks(db, { after: 30 }, new Set(), undefined, { outbox: true });
    expect(removed.map((r) => r.hash)).toEqual([hash(8)]);
    const rows = await readOutboxAfter(db, before, 100);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      kind: "removed",
      txHash: hash(8),
      blockNumber: 31,
      blockHash: blockHash(31),
    });
    expect(rows[0]!.detail?.protocol).toBe("demoswap");
    expect(new Set(rows[0]!.detail?.parties)).toEqual(new Set(removed[0]!.parties));
    expect(rows[0]!.detail?.parties).toEqual(expect.arrayContaining([ALICE, BOB]));
    expect(rows[0]!.detail?.tokens.sort()).toEqual([...removed[0]!.tokens].sort());
  });
});

describe("readEventDetails", () => {
  test("default: the rows and parties of stored transactions; a hash not stored is absent", async () => {
    const stored = tx(9, 40);
    await commitBatch(db, {
      source: "track",
      transactions: [stored],
      blocks: [header(40)],
      deltaTokens: new Set(),
    });
    const details = await readEventDetails(db, [hash(9), hash(99)]);
    expect([...details.keys()]).toEqual([hash(9)]);
    const d = details.get(hash(9))!;
    expect(d.tx).toMatchObject({
      hash: hash(9),
      blockHash: blockHash(40),
      source: "track",
      protocol: "demoswap",
    });
    expect(d.logs).toHaveLength(stored.logs.length);
    expect(d.transfers).toHaveLength(stored.transfers.length);
    expect(d.parties.sort()).toEqual(expect.arrayContaining([ALICE, BOB]));
    expect(await readEventDetails(db, [])).toEqual(new Map());
  });
});

describe("pruneOutbox", () => {
  test("default: deletes rows older than the retention, in batches, and keeps the others", async () => {
    await commitBatch(db, {
      source: "poll",
      transactions: [tx(10, 50), tx(11, 50, 1), tx(12, 50, 2), tx(13, 51)],
      blocks: [header(50), header(51)],
      deltaTokens: new Set(),
      outbox: true,
    });
    const rows = await readOutboxAfter(db, 0, 100);
    // The first three look an hour old.
    const old = rows.slice(0, 3).map((r) => r.seq);
    await db.execute(
      sql`update broadcast_outbox set created_at = now() - interval '1 hour' where seq in (${sql.join(old, sql`, `)})`,
    );
    expect(await pruneOutbox(db, 10 * 60_000, 2)).toBe(3);
    const kept = await readOutboxAfter(db, 0, 100);
    expect(kept.map((r) => r.txHash)).toEqual([hash(13)]);
    expect(await outboxBounds(db)).toEqual({ oldest: kept[0]!.seq, newest: kept[0]!.seq });
    expect(await pruneOutbox(db, 10 * 60_000)).toBe(0);
  });

  test("args: an empty outbox has bounds 0", async () => {
    expect(await outboxBounds(db)).toEqual({ oldest: 0, newest: 0 });
  });
});
