import type { Hash } from "viem";
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../../test/helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../../test/helpers/pipeline.ts";
import { type RpcProxy, startRpcProxy } from "../../test/helpers/rpcProxy.ts";
import type { Db } from "../store/createDatabase.ts";
import { trackedTransactions } from "../store/schema.ts";
import { getTracked } from "../store/tracked.ts";
import { getTransaction } from "../store/transactionReads.ts";
import { type TrackTxs, trackTxs } from "./_test/trackTxs.ts";
import { createTracker, type Tracker } from "./createTracker.ts";
import { createTrackWatcher, type TrackWatcher } from "./createTrackWatcher.ts";
import type { TrackingOptions } from "./trackingOptions.ts";

let chain: DemoChain;
let proxy: RpcProxy;
let testDb: TestDatabase;
let db: Db;
let pipeline: TestPipeline;
let txs: TrackTxs;
let tracker: Tracker;
let now: Date;
const started: TrackWatcher[] = [];

const MINUTE = 60_000;
const clock: Partial<TrackingOptions> = { now: () => now };

beforeAll(async () => {
  chain = await setupDemoChain();
  proxy = await startRpcProxy({ upstream: chain.anvil.url });
  testDb = await createTestDatabase();
  db = testDb.database.db;
  const config = { ...chain.config, rpc: { ...chain.config.rpc, urls: [proxy.url] } };
  pipeline = await createTestPipeline({ config, database: testDb.database });
  txs = trackTxs(chain);
  tracker = createTracker(pipeline.common, { db, ingest: pipeline.ingest }, clock);
});

afterAll(async () => {
  await pipeline?.close();
  await testDb?.cleanup();
  await proxy?.close();
  await chain?.anvil.stop();
});

beforeEach(async () => {
  proxy.clearFaults();
  pipeline.events.length = 0;
  now = new Date("2026-11-21T08:00:00.000Z");
  await db.delete(trackedTransactions);
});

afterEach(async () => {
  for (const w of started.splice(0)) await w.stop();
  await txs.setAutomine(true);
});

const watcher = (options: Partial<TrackingOptions> = {}): TrackWatcher =>
  createTrackWatcher(
    pipeline.common,
    { db, chain: pipeline.chain, ingest: pipeline.ingest },
    {
      ...clock,
      ...options,
    },
  );

const stored = () =>
  pipeline.events.flatMap((e) => (e.type === "transaction" ? [e.transaction.hash.toLowerCase()] : []));

test("default: a transaction tracked in the mempool is stored by the first pass after it is mined", async () => {
  const w = watcher();
  await txs.setAutomine(false);
  const hash = await txs.disperseEther();
  expect((await tracker.track(hash)).status).toBe("pending");

  const first = await w.checkOnce();
  expect(first).toMatchObject({ checked: 1, indexed: 0, stillPending: 1, expired: 0 });
  // Same head: nothing can have been mined, and the node was already asked about this hash.
  expect(await w.checkOnce()).toMatchObject({ checked: 0, head: first.head });
  expect((await getTracked(db, hash))?.status).toBe("pending");

  await txs.mine();
  const pass = await w.checkOnce();
  expect(pass).toMatchObject({
    checked: 1,
    indexed: 1,
    notRelevant: 0,
    stillPending: 0,
    head: first.head + 1,
  });
  expect(await getTracked(db, hash)).toMatchObject({ status: "indexed", lastCheckedAt: now });
  const tx = await getTransaction(db, hash);
  expect(tx?.tx).toMatchObject({ source: "track", protocol: "demovault", blockNumber: first.head + 1 });
  expect(stored()).toEqual([hash.toLowerCase()]);
  expect(pipeline.events[0]).toMatchObject({ type: "transaction", source: "track" });
  // Settled: later passes leave it alone.
  await txs.mine();
  expect(await w.checkOnce()).toMatchObject({ checked: 0 });
});

test("args: every watch is asked about again after recheckMs even while the head stays", async () => {
  const w = watcher({ recheckMs: 4_000 });
  const hash = `0x${"cf".repeat(32)}` as Hash;
  await tracker.track(hash);
  const first = await w.checkOnce();
  expect(first).toMatchObject({ checked: 1, stillPending: 1 });
  now = new Date(now.getTime() + 3_999);
  expect(await w.checkOnce()).toMatchObject({ checked: 0, head: first.head });
  now = new Date(now.getTime() + 1);
  expect(await w.checkOnce()).toMatchObject({ checked: 1, stillPending: 1, head: first.head });
  expect(await getTracked(db, hash)).toMatchObject({ status: "pending", lastCheckedAt: now });
});

test("behavior: an unknown hash expires after ttl of the injected clock, not before", async () => {
  const w = watcher();
  const hash = `0x${"cd".repeat(32)}` as Hash;
  expect(await tracker.track(hash)).toMatchObject({ status: "pending" });
  now = new Date(now.getTime() + 10 * MINUTE - 1);
  expect(await w.checkOnce()).toMatchObject({ expired: 0, checked: 1, stillPending: 1 });
  expect((await getTracked(db, hash))?.status).toBe("pending");
  now = new Date(now.getTime() + 1);
  expect(await w.checkOnce()).toMatchObject({ expired: 1, checked: 0 });
  expect(await getTracked(db, hash)).toMatchObject({ status: "expired" });
  // Resubmitted after expiry: watched again for a new ttl.
  expect(await tracker.track(hash)).toEqual({
    status: "pending",
    hash,
    expiresAt: new Date(now.getTime() + 10 * MINUTE),
  });
  expect((await getTracked(db, hash))?.status).toBe("pending");
});

test("args: a shortened ttl expires sooner", async () => {
  const short = createTracker(pipeline.common, { db, ingest: pipeline.ingest }, { ...clock, ttlMs: 1_000 });
  const hash = `0x${"ce".repeat(32)}` as Hash;
  await short.track(hash);
  now = new Date(now.getTime() + 1_000);
  expect(await watcher().checkOnce()).toMatchObject({ expired: 1 });
});

test("behavior: each watch is ingested with its own hint, which wins only where the transaction touches it", async () => {
  const w = watcher();
  await txs.setAutomine(false);
  const hinted = await txs.disperseWeth(1);
  const plain = await txs.disperseWeth(2);
  const swap = await txs.swap(3);
  expect((await tracker.track(hinted, "demoswap")).status).toBe("pending");
  expect((await tracker.track(plain)).status).toBe("pending");
  expect((await tracker.track(swap, "demovault")).status).toBe("pending");
  await txs.mine();
  expect(await w.checkOnce()).toMatchObject({ checked: 3, indexed: 3 });
  expect((await getTransaction(db, hinted))?.tx.protocol).toBe("demoswap");
  expect((await getTransaction(db, plain))?.tx.protocol).toBe("demovault");
  expect((await getTransaction(db, swap))?.tx.protocol).toBe("demoswap");
});

test("behavior: a watched transaction mined but touching nothing configured is settled not_relevant", async () => {
  const w = watcher();
  await txs.setAutomine(false);
  const hash = await txs.unrelated(4);
  await tracker.track(hash, "demoswap");
  await txs.mine();
  expect(await w.checkOnce()).toMatchObject({ checked: 1, notRelevant: 1, indexed: 0 });
  expect((await getTracked(db, hash))?.status).toBe("not_relevant");
  expect(await getTransaction(db, hash)).toBeNull();
  expect(pipeline.events).toEqual([]);
});

test("behavior: a hash the node could not be asked about is checked even when the head has not moved", async () => {
  const w = watcher();
  await w.checkOnce(); // remembers the head
  const hash = await txs.disperseEther(1); // mined: the head moves here…
  await w.checkOnce(); // …and this pass sees the new head
  proxy.inject({ kind: "http", status: 503, body: "down", method: "eth_getTransactionReceipt" });
  await expect(tracker.track(hash)).rejects.toThrow(/could not be asked/);
  proxy.clearFaults();
  expect((await getTracked(db, hash))?.lastCheckedAt).toBeNull();
  expect(await w.checkOnce()).toMatchObject({ checked: 1, indexed: 1 });
  expect((await getTransaction(db, hash))?.tx.source).toBe("track");
});

test("behavior: the running loop stores a mined watch within seconds, survives a failing pass, and stops", async () => {
  const w = watcher({ intervalMs: 100 });
  await txs.setAutomine(false);
  const hash = await txs.disperseEther(2);
  await tracker.track(hash);
  // More failures than the chain client retries: the first passes fail, the loop goes on.
  proxy.resetCounts();
  proxy.inject({ kind: "http", status: 503, body: "down", method: "eth_blockNumber", times: 8 });
  w.start();
  started.push(w);
  await txs.mine();
  const deadline = Date.now() + 10_000;
  while ((await getTracked(db, hash))?.status !== "indexed") {
    if (Date.now() > deadline) throw new Error("the watcher did not store the mined transaction");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect((await getTransaction(db, hash))?.tx.source).toBe("track");
  expect(proxy.counts.eth_blockNumber).toBeGreaterThan(8);
  await w.stop();
  started.splice(0);
});
