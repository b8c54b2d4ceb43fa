import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { mulberry32 } from "../../test/helpers/faultsRandom.ts";
import type { Address } from "../config/schema.ts";
import type { IndexedTransaction } from "../decode/decodeTransaction.ts";
import { commitBatch } from "./commitBatch.ts";
import type { Db } from "./createDatabase.ts";
import { syncHistoryHolders } from "./historyHolders.ts";
import { getHistoryBuckets, getHolderHours, saveHistoryVolumes } from "./historyReads.ts";
import { removeBlocks } from "./removeBlocks.ts";
import { priceHistory, transactions } from "./schema.ts";

const addr = (i: number) => `0x${i.toString(16).padStart(40, "0")}` as Address;
const TOKEN = addr(0xdead);
const POOL = addr(100);
const hashOf = (block: number, index: number) =>
  `0x${block.toString(16).padStart(32, "0")}${index.toString(16).padStart(32, "0")}` as const;
const T0 = Date.UTC(2026, 0, 1);
/** Block n is 20 minutes after block n-1: three blocks an hour, 72 a day. */
const timeOf = (block: number) => new Date(T0 + block * 20 * 60_000);

function tx(
  block: number,
  index: number,
  protocol: string,
  from: number,
  transfers: [number, number, bigint][] = [],
): IndexedTransaction {
  return {
    hash: hashOf(block, index),
    blockNumber: block,
    blockHash: hashOf(block, 999),
    transactionIndex: index,
    blockTimestamp: timeOf(block),
    from: addr(from),
    to: POOL,
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
    transfers: transfers.map(([f, t, amount], logIndex) => ({
      logIndex,
      token: TOKEN,
      from: addr(f),
      to: addr(t),
      amount,
    })),
  };
}

const commit = (db: Db, txs: IndexedTransaction[]) =>
  commitBatch(db, { source: "poll", transactions: txs, blocks: [], deltaTokens: new Set() });

type Figures = Record<string, { transactionCount: number; uniqueUsers: number }>;

/** Every bucket recomputed from the stored transactions, independently of the triggers. */
async function recount(db: Db, span: "hour" | "day", protocol: string | null): Promise<Figures> {
  const result = await db.execute<{ bucket: string | Date; n: string; users: string }>(sql`
    select date_trunc(${span}, block_timestamp, 'UTC') as bucket, count(*)::text as n,
      count(distinct from_address)::text as users
    from ${transactions} ${protocol === null ? sql`` : sql`where protocol = ${protocol}`}
    group by 1 order by 1`);
  return Object.fromEntries(
    result.rows.map((r) => [
      new Date(r.bucket).toISOString(),
      { transactionCount: Number(r.n), uniqueUsers: Number(r.users) },
    ]),
  );
}

async function maintained(db: Db, span: "hour" | "day", protocol: string): Promise<Figures> {
  const rows = await getHistoryBuckets(db, {
    span,
    protocol,
    first: new Date(0),
    last: new Date(T0 + 1000 * 86_400_000),
    configHash: "x",
  });
  return Object.fromEntries(
    rows
      .filter((r) => r.transactionCount > 0)
      .map((r) => [
        r.bucket.toISOString(),
        { transactionCount: r.transactionCount, uniqueUsers: r.uniqueUsers },
      ]),
  );
}

async function expectExact(db: Db, label: string) {
  for (const span of ["hour", "day"] as const) {
    expect(await maintained(db, span, ""), `${label}: ${span}, all`).toEqual(await recount(db, span, null));
    for (const protocol of ["swap", "vault"]) {
      expect(await maintained(db, span, protocol), `${label}: ${span}, ${protocol}`).toEqual(
        await recount(db, span, protocol),
      );
    }
  }
}

describe("history roll-ups", () => {
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
    await syncHistoryHolders(db, []);
  });

  test("default: hour and day buckets count transactions and distinct senders, per protocol and for all", async () => {
    // Blocks 0-2 are hour 0, block 3 hour 1; sender 1 twice in hour 0, in both protocols.
    await commit(db, [tx(0, 0, "swap", 1), tx(1, 0, "swap", 1), tx(2, 0, "vault", 1), tx(3, 0, "swap", 2)]);
    expect(await maintained(db, "hour", "")).toEqual({
      "2026-01-01T00:00:00.000Z": { transactionCount: 3, uniqueUsers: 1 },
      "2026-01-01T01:00:00.000Z": { transactionCount: 1, uniqueUsers: 1 },
    });
    expect(await maintained(db, "day", "swap")).toEqual({
      "2026-01-01T00:00:00.000Z": { transactionCount: 3, uniqueUsers: 2 },
    });
    await expectExact(db, "after commit");
  });

  test("behavior: random commits and rollbacks keep every bucket exact", async () => {
    const random = mulberry32(11);
    const pick = (n: number) => Math.floor(random() * n);
    let block = 1;
    for (let round = 0; round < 10; round++) {
      const batch: IndexedTransaction[] = [];
      for (let b = 0; b < 1 + pick(40); b++, block++) {
        for (let i = 0; i < 1 + pick(3); i++)
          batch.push(tx(block, i, pick(3) === 0 ? "vault" : "swap", pick(5)));
      }
      await commit(db, batch);
      await expectExact(db, `round ${round}, commit`);
      if (pick(2) === 0) {
        await removeBlocks(db, { after: Math.max(0, block - 1 - pick(50)) }, new Set());
        await expectExact(db, `round ${round}, rollback`);
      }
    }
    await db.execute(sql`update ${transactions} set protocol = 'vault' where block_number % 7 = 0`);
    await expectExact(db, "re-attributed");
    await db.execute(sql`truncate transactions, address_transactions`);
    await expectExact(db, "truncated");
  });

  test("behavior: a change of transactions gives every later bucket a new revision", async () => {
    await commit(db, [tx(0, 0, "swap", 1), tx(9, 0, "swap", 1)]);
    const range = {
      span: "hour" as const,
      protocol: "swap",
      first: new Date(T0),
      last: timeOf(9),
      configHash: "c",
    };
    const before = await getHistoryBuckets(db, range);
    await saveHistoryVolumes(db, {
      span: "hour",
      protocol: "swap",
      configHash: "c",
      volumes: before.map((r) => ({ bucket: r.bucket, revision: r.revision, volumeUsd: 5 })),
    });
    expect((await getHistoryBuckets(db, range)).map((r) => r.volumeUsd)).toEqual([5, 5]);
    expect((await getHistoryBuckets(db, { ...range, configHash: "other" })).map((r) => r.volumeUsd)).toEqual([
      null,
      null,
    ]);
    // A transaction in hour 1 may move a price (a pool's Sync) for hour 3 too, not for hour 0.
    await commit(db, [tx(3, 0, "vault", 2)]);
    expect((await getHistoryBuckets(db, range)).map((r) => r.volumeUsd)).toEqual([5, null]);
    // A price recorded at hour 2 (an api backfill point) may move every later transfer's value.
    const now = await getHistoryBuckets(db, range);
    await saveHistoryVolumes(db, {
      span: "hour",
      protocol: "swap",
      configHash: "c",
      volumes: now.map((r) => ({ bucket: r.bucket, revision: r.revision, volumeUsd: 7 })),
    });
    await db.insert(priceHistory).values({
      tokenAddress: TOKEN,
      source: "api",
      time: timeOf(6),
      priceUsd: 1.5,
      origin: "backfill",
    });
    expect((await getHistoryBuckets(db, range)).map((r) => r.volumeUsd)).toEqual([7, null]);
    await db.execute(sql`truncate price_history`);
    expect((await getHistoryBuckets(db, range)).map((r) => r.volumeUsd)).toEqual([null, null]);
  });

  test("behavior: followed holders' hourly net transfers, added from stored transfers and kept by triggers", async () => {
    await commit(db, [tx(0, 0, "swap", 1, [[1, 100, 50n]]), tx(4, 0, "swap", 1, [[100, 2, 20n]])]);
    expect(await syncHistoryHolders(db, [POOL])).toEqual({ added: [POOL], removed: [] });
    await commit(db, [
      tx(7, 0, "swap", 1, [
        [3, 100, 7n],
        [100, 100, 1000n],
      ]),
    ]);
    const hours = await getHolderHours(db, {
      holders: [POOL],
      tokens: [TOKEN],
      since: timeOf(3),
      until: timeOf(30),
    });
    expect(hours.before).toEqual(new Map([[TOKEN, 50n]]));
    expect(hours.hours).toEqual([
      { token: TOKEN, hour: timeOf(3), delta: -20n },
      { token: TOKEN, hour: timeOf(6), delta: 7n },
    ]);
    await removeBlocks(db, { after: 5 }, new Set());
    const after = await getHolderHours(db, {
      holders: [POOL],
      tokens: [TOKEN],
      since: timeOf(3),
      until: timeOf(30),
    });
    expect(after.hours.filter((h) => h.delta !== 0n)).toEqual([
      { token: TOKEN, hour: timeOf(3), delta: -20n },
    ]);
    expect(await syncHistoryHolders(db, [])).toEqual({ added: [], removed: [POOL] });
    expect(
      (await getHolderHours(db, { holders: [POOL], tokens: [TOKEN], since: timeOf(0), until: timeOf(30) }))
        .hours,
    ).toEqual([]);
  });
});
