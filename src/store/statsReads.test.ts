import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { mulberry32 } from "../../test/helpers/faultsRandom.ts";
import type { Address } from "../config/schema.ts";
import type { IndexedTransaction } from "../decode/decodeTransaction.ts";
import { commitBatch } from "./commitBatch.ts";
import type { Db } from "./createDatabase.ts";
import { removeBlocks } from "./removeBlocks.ts";
import { transactions } from "./schema.ts";
import {
  countTransactionsSince,
  getAllProtocolCounts,
  getGlobalCounts,
  getProtocolCounts,
} from "./statsReads.ts";

const addr = (i: number) => `0x${i.toString(16).padStart(40, "0")}` as Address;
const TOKEN = addr(0xdead);
const hashOf = (block: number, index: number) =>
  `0x${block.toString(16).padStart(32, "0")}${index.toString(16).padStart(32, "0")}` as const;

function tx(
  block: number,
  index: number,
  protocol: string,
  from: number,
  to: number,
  transfers: [number, number][] = [],
): IndexedTransaction {
  return {
    hash: hashOf(block, index),
    blockNumber: block,
    blockHash: hashOf(block, 999),
    transactionIndex: index,
    blockTimestamp: new Date(Date.UTC(2026, 0, 1) + block * 3_600_000),
    from: addr(from),
    to: addr(to),
    value: 0n,
    gasUsed: 21_000n,
    effectiveGasPrice: 1n,
    input: "0x",
    nonce: 0,
    gas: 21_000n,
    cumulativeGasUsed: 21_000n,
    status: true,
    contractAddress: null,
    protocol,
    actionType: "swap",
    functionName: "swap",
    functionArgs: {},
    logs: [],
    transfers: transfers.map(([f, t], logIndex) => ({
      logIndex,
      token: TOKEN,
      from: addr(f),
      to: addr(t),
      amount: 1n,
    })),
  };
}

/** Every figure recomputed from the rows, to compare with the maintained counters. */
async function recount(db: Db) {
  const result = await db.execute<{ protocol: string; n: string; users: string }>(
    sql`select protocol, count(*)::text as n, count(distinct from_address)::text as users
        from transactions group by protocol order by protocol`,
  );
  const totals = await db.execute<{ txs: string; transfers: string; addresses: string }>(
    sql`select (select count(*) from transactions)::text as txs, (select count(*) from token_transfers)::text as transfers,
        (select count(distinct address) from address_transactions)::text as addresses`,
  );
  const t = totals.rows[0]!;
  return {
    protocols: Object.fromEntries(
      result.rows.map((r) => [r.protocol, { transactionCount: Number(r.n), uniqueUsers: Number(r.users) }]),
    ),
    global: {
      transactions: Number(t.txs),
      tokenTransfers: Number(t.transfers),
      addresses: Number(t.addresses),
    },
  };
}

async function maintained(db: Db) {
  const all = await getAllProtocolCounts(db);
  return {
    protocols: Object.fromEntries(
      [...all.values()]
        .filter((c) => c.transactionCount !== 0 || c.uniqueUsers !== 0)
        .sort((a, b) => a.protocol.localeCompare(b.protocol))
        .map((c) => [c.protocol, { transactionCount: c.transactionCount, uniqueUsers: c.uniqueUsers }]),
    ),
    global: await getGlobalCounts(db),
  };
}

const commit = (db: Db, txs: IndexedTransaction[]) =>
  commitBatch(db, { source: "poll", transactions: txs, blocks: [], deltaTokens: new Set() });

describe("statsReads", () => {
  let tdb: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = tdb.database.db;
  });
  afterAll(async () => {
    await tdb?.cleanup();
  });
  beforeEach(async () => {
    await db.execute(sql`truncate transactions, logs, token_transfers, address_transactions, token_balances`);
  });

  test("default: counters follow ingest and rollback exactly", async () => {
    expect(await getProtocolCounts(db, "swap")).toEqual({
      protocol: "swap",
      transactionCount: 0,
      uniqueUsers: 0,
      updatedAt: null,
    });
    await commit(db, [
      tx(1, 0, "swap", 1, 100, [[1, 2]]),
      tx(1, 1, "swap", 1, 100),
      tx(1, 2, "vault", 2, 101),
    ]);
    await commit(db, [
      tx(2, 0, "swap", 3, 100, [
        [3, 4],
        [4, 5],
      ]),
      tx(2, 1, "vault", 2, 101),
    ]);
    // A second ingestion of the same hashes changes nothing.
    await commit(db, [tx(2, 0, "swap", 3, 100, [[3, 4]]), tx(1, 2, "vault", 2, 101)]);
    expect(await maintained(db)).toEqual(await recount(db));
    expect(await maintained(db)).toEqual({
      protocols: {
        swap: { transactionCount: 3, uniqueUsers: 2 },
        vault: { transactionCount: 2, uniqueUsers: 1 },
      },
      // parties: 1, 2, 3, 4, 5, 100, 101
      global: { transactions: 5, tokenTransfers: 3, addresses: 7 },
    });
    const swap = await getProtocolCounts(db, "swap");
    expect(swap.updatedAt).toBeInstanceOf(Date);

    // Rollback of block 2: user 3 and addresses 3, 4, 5 disappear; users 1 and 2 stay.
    await removeBlocks(db, { after: 1 }, new Set());
    expect(await maintained(db)).toEqual(await recount(db));
    expect(await maintained(db)).toEqual({
      protocols: {
        swap: { transactionCount: 2, uniqueUsers: 1 },
        vault: { transactionCount: 1, uniqueUsers: 1 },
      },
      global: { transactions: 3, tokenTransfers: 1, addresses: 4 },
    });

    await removeBlocks(db, { numbers: [1] }, new Set());
    expect(await maintained(db)).toEqual({
      protocols: {},
      global: { transactions: 0, tokenTransfers: 0, addresses: 0 },
    });
  });

  test("behavior: direct updates and truncation keep the counters exact", async () => {
    await commit(db, [tx(5, 0, "swap", 1, 100), tx(5, 1, "swap", 2, 100), tx(6, 0, "swap", 1, 100)]);
    // Re-attributing a transaction moves it, and its sender, to the other protocol.
    await db.execute(sql`update ${transactions} set protocol = 'vault' where block_number = 6`);
    expect(await maintained(db)).toEqual(await recount(db));
    expect((await maintained(db)).protocols).toEqual({
      swap: { transactionCount: 2, uniqueUsers: 2 },
      vault: { transactionCount: 1, uniqueUsers: 1 },
    });
    await db.execute(sql`truncate transactions, address_transactions`);
    expect(await maintained(db)).toEqual(await recount(db));
  });

  test("behavior: many senders in one batch", async () => {
    const batch = Array.from({ length: 1200 }, (_, i) =>
      tx(10 + Math.floor(i / 100), i % 100, "swap", i % 700, 100),
    );
    await commit(db, batch);
    expect(await maintained(db)).toEqual(await recount(db));
    expect((await getProtocolCounts(db, "swap")).uniqueUsers).toBe(700);
  });

  test("behavior: random commits and rollbacks over a few senders and parties keep every counter exact", async () => {
    // Few senders and parties, so that keys are created, counted up, emptied by rollbacks and created again.
    const random = mulberry32(7);
    const pick = (n: number) => Math.floor(random() * n);
    let block = 1;
    for (let round = 0; round < 12; round++) {
      const batch: IndexedTransaction[] = [];
      for (let b = 0; b < 1 + pick(3); b++, block++) {
        for (let i = 0; i < 1 + pick(4); i++) {
          const transfers: [number, number][] = pick(2) === 0 ? [[pick(6), 200 + pick(6)]] : [];
          batch.push(tx(block, i, pick(3) === 0 ? "vault" : "swap", pick(5), 100 + pick(3), transfers));
        }
      }
      await commit(db, batch);
      expect(await maintained(db), `round ${round}, after commit`).toEqual(await recount(db));
      if (pick(3) === 0) {
        await removeBlocks(db, { after: Math.max(0, block - 1 - pick(4)) }, new Set());
        expect(await maintained(db), `round ${round}, after rollback`).toEqual(await recount(db));
      }
    }
    expect((await recount(db)).global.transactions).toBeGreaterThan(10);
  });

  test("default: countTransactionsSince counts by block time", async () => {
    await commit(db, [tx(1, 0, "swap", 1, 100), tx(2, 0, "swap", 1, 100), tx(3, 0, "swap", 1, 100)]);
    const block2 = new Date(Date.UTC(2026, 0, 1) + 2 * 3_600_000);
    expect(await countTransactionsSince(db, block2)).toBe(2);
    expect(await countTransactionsSince(db, new Date(block2.getTime() + 1))).toBe(1);
  });
});
