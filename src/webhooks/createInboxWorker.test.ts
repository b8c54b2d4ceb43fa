import { sql } from "drizzle-orm";
import { createWalletClient, encodeFunctionData, type Hash, http, parseEther } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../../test/helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../../test/helpers/pipeline.ts";
import { type RpcProxy, startRpcProxy } from "../../test/helpers/rpcProxy.ts";
import type { Address } from "../config/schema.ts";
import type { Db } from "../store/createDatabase.ts";
import { getDeliveries, insertDelivery } from "../store/inbox.ts";
import { webhookInbox } from "../store/schema.ts";
import { getTransaction } from "../store/transactionReads.ts";
import { alchemyAddressActivity } from "./_test/fixtures.ts";
import { createInboxWorker, type InboxWorker, type InboxWorkerOptions } from "./createInboxWorker.ts";
import { createInboxSignal } from "./inboxSignal.ts";

let chain: DemoChain;
let proxy: RpcProxy;
let testDb: TestDatabase;
let db: Db;
let pipeline: TestPipeline;

const FAST: Partial<InboxWorkerOptions> = {
  pollIntervalMs: 20,
  pendingRetryDelaysMs: [30, 30],
  errorBackoff: { baseMs: 10, maxMs: 20 },
};

beforeAll(async () => {
  chain = await setupDemoChain();
  proxy = await startRpcProxy({ upstream: chain.anvil.url });
  testDb = await createTestDatabase();
  db = testDb.database.db;
  const config = { ...chain.config, rpc: { ...chain.config.rpc, urls: [proxy.url] } };
  pipeline = await createTestPipeline({ config, database: testDb.database });
});

afterAll(async () => {
  await pipeline?.close();
  await testDb?.cleanup();
  await proxy?.close();
  await chain?.anvil.stop();
});

beforeEach(async () => {
  proxy.clearFaults();
  await db.delete(webhookInbox);
  pipeline.events.length = 0;
});

const worker = (options: Partial<InboxWorkerOptions> = FAST): InboxWorker =>
  createInboxWorker(pipeline.common, { db, ingest: pipeline.ingest }, options);

/**
 * Wait until `hash` is mined: anvil can answer a send before its automined block is in (about one send in
 * fifteen), and a delivery of a transaction not mined yet is retried instead of processed.
 */
async function mined(hash: Hash): Promise<Hash> {
  await pipeline.chain.client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  return hash;
}

/** Disperse ether to one recipient: a transaction only webhooks and track-tx can see (Disperse is shared). */
async function sendDisperse(userIndex = 0, recipientIndex = 1): Promise<Hash> {
  const wallet = createWalletClient({ transport: http(chain.anvil.url) });
  const [user, other] = [chain.deployment.users[userIndex]!, chain.deployment.users[recipientIndex]!];
  return wallet.sendTransaction({
    account: user,
    chain: null,
    to: chain.deployment.contracts.disperse,
    value: parseEther("0.1"),
    data: encodeFunctionData({
      abi: chain.deployment.abis.disperse,
      functionName: "disperseEther",
      args: [[other], [parseEther("0.1")]],
    }),
  });
}

/** `sendDisperse`, mined. */
const disperseEther = async (userIndex = 0, recipientIndex = 1): Promise<Hash> =>
  mined(await sendDisperse(userIndex, recipientIndex));

/** Store an ADDRESS_ACTIVITY delivery naming `hashes`, as the route would after verifying it. */
async function deliver(hashes: readonly Hash[], id?: string): Promise<number> {
  const [from, to] = chain.deployment.users as [Address, Address];
  const payload = alchemyAddressActivity(
    hashes.map((hash) => ({
      hash,
      blockNum: 1,
      fromAddress: from,
      toAddress: to,
      category: "external" as const,
      value: 0.1,
      rawValue: parseEther("0.1"),
    })),
    id === undefined ? {} : { id },
  );
  const { id: rowId } = await insertDelivery(db, {
    provider: "alchemy",
    deliveryId: String(payload.id),
    rawBody: JSON.stringify(payload),
  });
  return rowId;
}

const storedHashes = () =>
  pipeline.events.flatMap((e) => (e.type === "transaction" ? [e.transaction.hash.toLowerCase()] : []));

describe("createInboxWorker", () => {
  test("default: a shared-contract transaction is stored with source webhook, broadcast, delivery done", async () => {
    const hash = await disperseEther();
    await deliver([hash]);
    expect(await worker().drain()).toBe(1);

    const stored = await getTransaction(db, hash);
    expect(stored?.tx).toMatchObject({ hash: hash.toLowerCase(), protocol: "demovault", source: "webhook" });
    expect(storedHashes()).toEqual([hash.toLowerCase()]);
    const [row] = await getDeliveries(db);
    expect(row).toMatchObject({ status: "done", attempts: 1, lastError: null });
    expect(row?.processedAt).toBeInstanceOf(Date);
  });

  test("behavior: deliveries are processed in arrival order", async () => {
    const hashes: Hash[] = [];
    for (let i = 0; i < 3; i++) {
      hashes.push(await disperseEther(i + 1, 0));
    }
    for (const hash of [...hashes].reverse()) await deliver([hash]);
    expect(await worker().drain()).toBe(3);
    expect(storedHashes()).toEqual([...hashes].reverse().map((h) => h.toLowerCase()));
  });

  test("behavior: an irrelevant transaction is ignored, the delivery still processed", async () => {
    const wallet = createWalletClient({ transport: http(chain.anvil.url) });
    const [user, other] = chain.deployment.users as [Address, Address];
    const hash = await mined(
      await wallet.sendTransaction({ account: user, chain: null, to: other, value: 1n }),
    );
    await deliver([hash]);
    await worker().drain();
    expect(await getTransaction(db, hash)).toBeNull();
    expect(pipeline.events).toEqual([]);
    const [row] = await getDeliveries(db);
    expect(row).toMatchObject({
      status: "done",
      lastError: "1 transaction(s) touch no configured contract or token: ignored",
    });
  });

  test("behavior: a transaction not mined yet is re-checked until it is", async () => {
    const request = (method: string, params: unknown[] = []) =>
      fetch(chain.anvil.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
    await request("evm_setAutomine", [false]);
    let hash: Hash;
    try {
      hash = await sendDisperse();
      await deliver([hash]);
      const w = worker({ ...FAST, pendingRetryDelaysMs: [60_000] });
      expect(await w.drain()).toBe(1);
      const [waiting] = await getDeliveries(db);
      expect(waiting).toMatchObject({ status: "pending", attempts: 1 });
      expect(waiting?.lastError).toBe(`1 transaction(s) not mined yet: ${hash.toLowerCase()}`);
      expect(await w.drain()).toBe(0); // not due before its delay
      await request("evm_mine");
    } finally {
      await request("evm_setAutomine", [true]);
    }
    await db.update(webhookInbox).set({ nextAttemptAt: sql`now()` });
    expect(await worker().drain()).toBe(1);
    expect((await getTransaction(db, hash))?.tx.source).toBe("webhook");
    expect((await getDeliveries(db))[0]).toMatchObject({ status: "done", attempts: 2 });
  });

  test("behavior: a hash never mined is given up after the retries, kept as failed", async () => {
    const ghost = `0x${"ab".repeat(32)}` as Hash;
    await deliver([ghost]);
    const w = worker();
    w.start();
    await until(async () => (await getDeliveries(db))[0]?.status === "failed");
    await w.stop();
    const [row] = await getDeliveries(db);
    expect(row).toMatchObject({ attempts: 3, rawBody: expect.stringContaining(ghost) });
    expect(row?.lastError).toBe(`1 transaction(s) not mined yet: ${ghost} (after 3 attempts)`);
  });

  test("error: the node failing keeps the delivery pending with the error, then it goes through", async () => {
    const hash = await disperseEther();
    await deliver([hash]);
    proxy.inject({ kind: "http", status: 503, body: "upstream unavailable" });
    const w = worker({ ...FAST, errorBackoff: { baseMs: 60_000, maxMs: 60_000 } });
    expect(await w.drain()).toBe(1);
    const [failedOnce] = await getDeliveries(db);
    expect(failedOnce).toMatchObject({ status: "pending", attempts: 1 });
    expect(failedOnce?.lastError).toEqual(expect.any(String));
    expect(failedOnce!.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + 30_000);

    proxy.clearFaults();
    await db.update(webhookInbox).set({ nextAttemptAt: sql`now()` });
    expect(await w.drain()).toBe(1);
    expect((await getDeliveries(db))[0]).toMatchObject({ status: "done", attempts: 2 });
    expect(storedHashes()).toEqual([hash.toLowerCase()]);
  });

  test("behavior: start() picks up what was pending (a restart) and a signal wakes it at once", async () => {
    const first = await disperseEther();
    await deliver([first]);
    const signal = createInboxSignal();
    const w = createInboxWorker(
      pipeline.common,
      { db, ingest: pipeline.ingest, signal },
      { pollIntervalMs: 60_000 },
    );
    w.start();
    await until(() => storedHashes().length === 1);

    const second = await disperseEther();
    await deliver([second]);
    const notifiedAt = Date.now();
    signal.notify();
    await until(() => storedHashes().length === 2);
    expect(Date.now() - notifiedAt).toBeLessThan(5_000);
    await w.stop();
    expect(storedHashes()).toEqual([first.toLowerCase(), second.toLowerCase()]);
  });

  test("error: a row of an unknown provider or with a broken body is failed, not retried", async () => {
    await insertDelivery(db, { provider: "nobody", deliveryId: "x", rawBody: "{}" });
    await insertDelivery(db, { provider: "alchemy", deliveryId: "y", rawBody: "{not json" });
    await insertDelivery(db, {
      provider: "alchemy",
      deliveryId: "z",
      rawBody: '{"id":"z","event":{"error":"boom"}}',
    });
    expect(await worker().drain()).toBe(3);
    const rows = await getDeliveries(db);
    expect(rows.map((r) => [r.deliveryId, r.status, r.lastError])).toEqual([
      ["x", "failed", 'unknown provider "nobody"'],
      ["y", "failed", "the stored body is not JSON"],
      ["z", "done", "provider error: boom"],
    ]);
  });
});

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
