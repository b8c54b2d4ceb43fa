import { eq } from "drizzle-orm";
import type { Hash } from "viem";
import { afterAll, beforeAll, beforeEach, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../../test/helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../../test/helpers/pipeline.ts";
import { type RpcProxy, startRpcProxy } from "../../test/helpers/rpcProxy.ts";
import type { Db } from "../store/createDatabase.ts";
import { blocks, trackedTransactions } from "../store/schema.ts";
import { getTracked } from "../store/tracked.ts";
import { getTransaction } from "../store/transactionReads.ts";
import { type TrackTxs, trackTxs } from "./_test/trackTxs.ts";
import { createTracker, type Tracker, TrackUnavailableError } from "./createTracker.ts";

let chain: DemoChain;
let proxy: RpcProxy;
let testDb: TestDatabase;
let db: Db;
let pipeline: TestPipeline;
let txs: TrackTxs;
let tracker: Tracker;
let now: Date;

const TTL = 600_000;

beforeAll(async () => {
  chain = await setupDemoChain();
  proxy = await startRpcProxy({ upstream: chain.anvil.url });
  testDb = await createTestDatabase();
  db = testDb.database.db;
  const config = { ...chain.config, rpc: { ...chain.config.rpc, urls: [proxy.url] } };
  pipeline = await createTestPipeline({ config, database: testDb.database });
  txs = trackTxs(chain);
  tracker = createTracker(pipeline.common, { db, ingest: pipeline.ingest }, { now: () => now });
});

afterAll(async () => {
  await pipeline?.close();
  await testDb?.cleanup();
  await proxy?.close();
  await chain?.anvil.stop();
});

beforeEach(async () => {
  proxy.clearFaults();
  proxy.resetCounts();
  pipeline.events.length = 0;
  now = new Date("2026-11-21T08:00:00.000Z");
  await db.delete(trackedTransactions);
});

const unknownHash = (n: number) => `0x${"ab".repeat(31)}${n.toString(16).padStart(2, "0")}` as Hash;

test("default: a mined transaction to the shared Disperse contract is stored with source track and broadcast", async () => {
  const hash = await txs.disperseEther();
  const outcome = await tracker.track(hash);
  expect(outcome.status).toBe("indexed");
  if (outcome.status !== "indexed") return;
  expect(outcome.inserted).toBe(true);
  expect(outcome.hash).toBe(hash.toLowerCase());
  expect(outcome.details.tx).toMatchObject({
    hash: hash.toLowerCase(),
    source: "track",
    protocol: "demovault",
    functionName: "disperseEther",
    actionType: "disperse",
    toAddress: chain.deployment.contracts.disperse.toLowerCase(),
  });
  expect(await getTransaction(db, hash)).toEqual(outcome.details);
  expect(pipeline.events.map((e) => e.type === "transaction" && e.transaction.hash.toLowerCase())).toEqual([
    hash.toLowerCase(),
  ]);
  expect(pipeline.events[0]).toMatchObject({ source: "track" });
  expect(await getTracked(db, hash)).toBeNull(); // indexed at once: never watched
});

test("behavior: a stored transaction is answered from the database without asking the node", async () => {
  const hash = await txs.disperseEther(1);
  await tracker.track(hash);
  proxy.resetCounts();
  pipeline.events.length = 0;
  const again = await tracker.track(hash, "demoswap");
  expect(again).toMatchObject({ status: "indexed", inserted: false });
  if (again.status === "indexed") expect(again.details.tx.protocol).toBe("demovault");
  expect(proxy.counts).toEqual({});
  expect(pipeline.events).toEqual([]);
});

test("behavior: an unknown hash is watched for ttl from the injected clock", async () => {
  const outcome = await tracker.track(unknownHash(1), "demoswap");
  expect(outcome).toEqual({
    status: "pending",
    hash: unknownHash(1),
    expiresAt: new Date(now.getTime() + TTL),
  });
  expect(await getTracked(db, unknownHash(1))).toEqual({
    txHash: unknownHash(1),
    protocolHint: "demoswap",
    source: "track",
    status: "pending",
    createdAt: now,
    expiresAt: new Date(now.getTime() + TTL),
    lastCheckedAt: now,
  });
  expect(pipeline.events).toEqual([]);
});

test("error: a mined transaction touching nothing configured is not relevant and not stored", async () => {
  const hash = await txs.unrelated();
  expect(await tracker.track(hash)).toEqual({ status: "not_relevant", hash: hash.toLowerCase() });
  expect(await getTransaction(db, hash)).toBeNull();
  expect(await getTracked(db, hash)).toBeNull();
  expect(pipeline.events).toEqual([]);
});

test("behavior: a hint wins only for a protocol the transaction touches", async () => {
  // Disperse of WETH: `to` is demovault's Disperse, the Transfer log is demoswap's WETH.
  const hinted = await txs.disperseWeth(2);
  const a = await tracker.track(hinted, "demoswap");
  expect(a.status === "indexed" && a.details.tx.protocol).toBe("demoswap");
  const unhinted = await txs.disperseWeth(3);
  const b = await tracker.track(unhinted);
  expect(b.status === "indexed" && b.details.tx.protocol).toBe("demovault");
  // A swap touches demoswap only: the demovault hint is ignored.
  const swap = await txs.swap(4);
  const c = await tracker.track(swap, "demovault");
  expect(c.status === "indexed" && c.details.tx.protocol).toBe("demoswap");
  // A transaction touching nothing stays irrelevant whatever the hint.
  const unrelated = await txs.unrelated(4);
  expect((await tracker.track(unrelated, "demoswap")).status).toBe("not_relevant");
});

test("behavior: 20 identical calls at once share one ingestion and store once", async () => {
  const hash = await txs.disperseEther(2);
  proxy.resetCounts();
  const outcomes = await Promise.all(Array.from({ length: 20 }, () => tracker.track(hash)));
  // One ingestion answered all of them: the same outcome, one receipt asked, one broadcast.
  for (const outcome of outcomes) expect(outcome).toBe(outcomes[0]);
  expect(outcomes[0]).toMatchObject({ status: "indexed", inserted: true });
  expect(proxy.counts.eth_getTransactionReceipt).toBe(1);
  expect(pipeline.events).toHaveLength(1);
  // Different hints are separate ingestions racing to store the same hash: it is still stored once.
  const other = await txs.disperseEther(3);
  const mixed = await Promise.all(
    Array.from({ length: 20 }, (_, i) => tracker.track(other, i % 2 === 0 ? "demovault" : undefined)),
  );
  expect(new Set(mixed.map((o) => o.status))).toEqual(new Set(["indexed"]));
  expect(new Set(mixed.map((o) => o.status === "indexed" && o.inserted))).toEqual(new Set([true, false]));
  expect(pipeline.events.map((e) => e.type === "transaction" && e.transaction.hash.toLowerCase())).toEqual([
    hash.toLowerCase(),
    other.toLowerCase(),
  ]);
});

test("error: its block stored under another hash (an orphan not rolled back yet) is TrackUnavailableError with reorg", async () => {
  const hash = await txs.disperseEther(5);
  const receipt = await pipeline.chain.client.getTransactionReceipt({ hash });
  const number = Number(receipt.blockNumber);
  // What a webhook stored from a block that a reorg replaced, before polling reaches it and rolls it back.
  await db.insert(blocks).values({
    number,
    hash: `0x${"ee".repeat(32)}`,
    parentHash: `0x${"dd".repeat(32)}`,
    timestamp: now,
  });
  try {
    const error = await tracker.track(hash).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrackUnavailableError);
    expect((error as TrackUnavailableError).reorg).toBe(true);
    expect((error as Error).message).toContain(
      `the chain reorganized under the block of ${hash.toLowerCase()} while it was fetched`,
    );
    expect((error as Error).message).toContain(`chain reorganized at block ${number}`);
    expect(await getTracked(db, hash)).toMatchObject({ status: "pending" });
    expect(await getTransaction(db, hash)).toBeNull();
  } finally {
    await db.delete(blocks).where(eq(blocks.number, number));
  }
  expect((await tracker.track(hash)).status).toBe("indexed");
});

test("error: the node failing is TrackUnavailableError and the hash is watched, unchecked", async () => {
  const hash = await txs.disperseEther(4);
  proxy.inject({ kind: "http", status: 503, body: "upstream down" });
  const error = await tracker.track(hash, "demovault").catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TrackUnavailableError);
  expect((error as TrackUnavailableError).hash).toBe(hash.toLowerCase());
  expect((error as TrackUnavailableError).reorg).toBe(false);
  expect((error as Error).message).toContain("upstream down");
  expect(await getTracked(db, hash)).toEqual({
    txHash: hash.toLowerCase(),
    protocolHint: "demovault",
    source: "track",
    status: "pending",
    createdAt: now,
    expiresAt: new Date(now.getTime() + TTL),
    lastCheckedAt: null,
  });
  expect(await getTransaction(db, hash)).toBeNull();
  proxy.clearFaults();
  const later = await tracker.track(hash);
  expect(later.status).toBe("indexed");
  expect((await getTracked(db, hash))?.status).toBe("indexed");
});
