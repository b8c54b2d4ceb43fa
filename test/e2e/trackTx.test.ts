import { createRequire } from "node:module";
import { eq } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import {
  createPublicClient,
  decodeEventLog,
  erc20Abi,
  getAddress,
  type Hash,
  http,
  type TransactionReceipt,
} from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { transactionJsonOf } from "../../src/api/toTransactionJson.ts";
import { type ChainClient, createChainClient } from "../../src/chain/createChainClient.ts";
import { startProtoscan } from "../../src/cli/startProtoscan.ts";
import type { Config } from "../../src/config/schema.ts";
import { createIndexer, type Indexer } from "../../src/indexer/createIndexer.ts";
import { type Broadcaster, createLocalBroadcaster, type IngestEvent } from "../../src/ingest/broadcaster.ts";
import { createIngest, type Ingest } from "../../src/ingest/createIngest.ts";
import type { Common } from "../../src/internal/common.ts";
import { createSilentLogger } from "../../src/internal/logger.ts";
import { createMetrics } from "../../src/internal/metrics.ts";
import { createShutdown } from "../../src/internal/shutdown.ts";
import { createPriceHistory } from "../../src/prices/createPriceHistory.ts";
import { createTransactionValuer } from "../../src/prices/transactionValues.ts";
import { createHub, type Hub } from "../../src/realtime/createHub.ts";
import { valueEvents } from "../../src/realtime/valueEvents.ts";
import { blocks } from "../../src/store/schema.ts";
import { getTracked } from "../../src/store/tracked.ts";
import { type TrackTxs, trackTxs } from "../../src/tracking/_test/trackTxs.ts";
import { createTracker, type Tracker } from "../../src/tracking/createTracker.ts";
import { createTrackWatcher, type TrackWatcher } from "../../src/tracking/createTrackWatcher.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { rawTransaction, reorgChain, sendRawTransaction } from "../helpers/reorg.ts";
import { type RpcProxy, startRpcProxy } from "../helpers/rpcProxy.ts";

// The project has no @types/ws; this is the part of the `ws` client API the test uses.
type WsClient = {
  send(data: string): void;
  close(): void;
  on(event: "message", listener: (data: Buffer) => void): WsClient;
  on(event: "open", listener: () => void): WsClient;
  on(event: "error", listener: (error: Error) => void): WsClient;
};
const WebSocket = createRequire(import.meta.url)("ws") as new (url: string) => WsClient;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are arbitrary JSON, asserted field by field
type Json = Record<string, any>;
type Reply = { status: number; headers: Headers; body: Json };

const MINUTE = 60_000;

/** One API process wired as `startProtoscan` wires it, on a free port, with the watcher's clock under test control. */
type Server = { app: FastifyInstance; url: string; common: Common };

describe("POST /api/track-tx (SPEC §3.3), real sockets", () => {
  let chain: DemoChain;
  let txs: TrackTxs;
  let proxy: RpcProxy;
  let db: TestDatabase;
  let common: Common;
  let chainClient: ChainClient;
  let broadcaster: Broadcaster;
  let ingest: Ingest;
  let indexer: Indexer;
  let hub: Hub;
  let tracker: Tracker;
  let watcher: TrackWatcher;
  let server: Server;
  const servers: Server[] = [];
  const published: IngestEvent[] = [];
  /** added to the real time by the tracker's and the watcher's clock */
  let clockOffsetMs = 0;
  const clock = { now: () => new Date(Date.now() + clockOffsetMs) };

  async function startServer(config: Config): Promise<Server> {
    const own: Common = { ...common, config, metrics: createMetrics(), shutdown: createShutdown() };
    const app = await buildApp(own, {
      database: db.database,
      chain: chainClient,
      indexerStatus: () => indexer.status(),
      hub,
      tracker,
    });
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    const started = { app, url, common: own };
    servers.push(started);
    return started;
  }

  async function post(body: unknown, headers: Record<string, string> = {}, to = server): Promise<Reply> {
    const response = await fetch(`${to.url}/api/track-tx`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Json };
  }

  async function getTx(hash: string): Promise<Reply> {
    const response = await fetch(`${server.url}/api/tx/${hash}`);
    return { status: response.status, headers: response.headers, body: (await response.json()) as Json };
  }

  async function catchUp(): Promise<void> {
    for (let i = 0; i < 50; i++) {
      const result = await indexer.runCycle();
      if (result.ended === "caught-up" && result.indexedBlock >= result.target) return;
    }
    throw new Error("indexer did not catch up");
  }

  async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** No receipt, transaction or block was fetched (the watcher's head reads may run meanwhile). */
  /** GET /api/tx/:hash until it answers 200: what the watcher stored. */
  const storedByWatcher = (hash: string, what = "the watcher to store it") =>
    waitFor(
      () => getTx(hash),
      (r) => r.status === 200,
      what,
    );

  const expectNodeNotAsked = () => {
    const { eth_blockNumber: _head, ...others } = proxy.counts;
    expect(others).toEqual({});
  };

  const problem = (code: string, title: string, status: number, detail: string) => ({
    type: `/docs/errors#${code}`,
    title,
    status,
    detail,
    code,
  });

  beforeAll(async () => {
    chain = await setupDemoChain();
    txs = trackTxs(chain);
    proxy = await startRpcProxy({ upstream: chain.anvil.url });
    db = await createTestDatabase();
    const config: Config = { ...chain.config, rpc: { ...chain.config.rpc, urls: [proxy.url] } };
    common = { config, logger: createSilentLogger(), metrics: createMetrics(), shutdown: createShutdown() };
    chainClient = createChainClient(common, { baseDelayMs: 20, maxDelayMs: 200 });
    broadcaster = createLocalBroadcaster();
    broadcaster.subscribe((event) => published.push(event));
    ingest = await createIngest(common, { chain: chainClient, db: db.database.db, broadcaster });
    indexer = createIndexer(common, { chain: chainClient, db: db.database.db, ingest });
    await catchUp();
    const history = createPriceHistory(common, { db: db.database.db, chain: chainClient });
    const transactionJson = transactionJsonOf(common.config);
    const value = createTransactionValuer(common.config, history);
    const source = valueEvents(broadcaster, { transactionJson, value, logger: common.logger });
    hub = createHub(common, { source, transactionJson });
    hub.start();
    tracker = createTracker(common, { db: db.database.db, ingest }, clock);
    watcher = createTrackWatcher(
      common,
      { db: db.database.db, chain: chainClient, ingest, events: broadcaster },
      { ...clock, intervalMs: 100 },
    );
    watcher.start();
    server = await startServer(config);
  });

  afterAll(async () => {
    for (const s of servers) await s.app.close().catch(() => {});
    await watcher?.stop();
    await hub?.stop();
    await indexer?.stop();
    await common?.shutdown.kill();
    chainClient?.close();
    await db?.cleanup();
    await proxy?.close();
    await chain?.anvil.stop();
  });

  beforeEach(async () => {
    proxy.clearFaults();
    clockOffsetMs = 0;
    await txs.setAutomine(true);
  });

  /** The Transaction JSON the chain itself implies for a receipt (the test decodes the logs on its own). */
  async function expectedFromChain(hash: Hash): Promise<Json> {
    const client = createPublicClient({ transport: http(chain.anvil.url) });
    const receipt: TransactionReceipt = await client.getTransactionReceipt({ hash });
    const tx = await client.getTransaction({ hash });
    const block = await client.getBlock({ blockNumber: receipt.blockNumber });
    const tokens = new Map(Object.values(chain.deployment.tokens).map((t) => [t.address.toLowerCase(), t]));
    const transfers = receipt.logs.flatMap((log) => {
      const token = tokens.get(log.address.toLowerCase());
      if (!token) return [];
      const event = decodeEventLog({ abi: erc20Abi, topics: log.topics, data: log.data });
      if (event.eventName !== "Transfer") return [];
      return [
        {
          tokenAddress: getAddress(log.address),
          tokenSymbol: token.symbol,
          fromAddress: getAddress(event.args.from),
          toAddress: getAddress(event.args.to),
          amount: event.args.value.toString(),
          decimals: token.decimals,
          logIndex: log.logIndex,
          // exact values at block time: test/e2e/valueUsd.test.ts
          valueUsd: expect.any(Number),
        },
      ];
    });
    return {
      txHash: hash.toLowerCase(),
      blockNumber: Number(receipt.blockNumber),
      blockHash: receipt.blockHash.toLowerCase(),
      transactionIndex: receipt.transactionIndex,
      blockTimestamp: new Date(Number(block.timestamp) * 1000).toISOString(),
      fromAddress: getAddress(receipt.from),
      toAddress: receipt.to ? getAddress(receipt.to) : null,
      contractAddress: null,
      valueWei: tx.value.toString(),
      gasUsed: receipt.gasUsed.toString(),
      gasPrice: receipt.effectiveGasPrice.toString(),
      status: receipt.status === "success",
      tokenTransfers: transfers,
      valueUsd: expect.any(Number),
      decodedData: {
        args: expect.any(Object),
        events: receipt.logs.map((log) => ({
          name: "Transfer",
          args: expect.any(Object),
          logIndex: log.logIndex,
          address: getAddress(log.address),
        })),
      },
    };
  }

  test("default: a transaction to the shared Disperse contract (polling cannot see it) is stored with source track", async () => {
    const hash = await txs.disperseWeth(0);
    await catchUp();
    expect((await getTx(hash)).status).toBe(404); // polling scanned past it and did not store it
    const events = published.length;

    const reply = await post({ txHash: hash.toUpperCase().replace("0X", "0x") });
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toContain("application/json");
    expect(Object.keys(reply.body).sort()).toEqual(["status", "transaction"]);
    expect(reply.body.status).toBe("indexed");
    const d = chain.deployment;
    expect(reply.body.transaction).toEqual({
      ...(await expectedFromChain(hash)),
      protocol: "demovault",
      actionType: "disperse",
      functionName: "disperseToken",
      decodedData: expect.objectContaining({
        args: {
          token: getAddress(d.tokens.WETH.address),
          recipients: [getAddress(d.users[1]!)],
          values: ["1000000000000000"],
        },
      }),
      source: "track",
    });
    expect(reply.body.transaction.tokenTransfers).toHaveLength(2);
    expect(reply.body.transaction).toEqual((await getTx(hash)).body);
    expect(published.slice(events)).toEqual([
      expect.objectContaining({ type: "transaction", source: "track" }),
    ]);

    // Asked again: answered from the database, nothing new broadcast.
    proxy.resetCounts();
    const again = await post({ txHash: hash });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(reply.body);
    expectNodeNotAsked();
    expect(published.length).toBe(events + 1);
  });

  test("behavior: a transaction polling stored before is answered as stored, without asking the node", async () => {
    const hash = await txs.swap(1);
    await catchUp();
    const stored = await getTx(hash);
    expect(stored.status).toBe(200);
    proxy.resetCounts();
    const reply = await post({ txHash: hash, protocol: "demovault" });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: "indexed", transaction: stored.body });
    expect(reply.body.transaction).toMatchObject({ source: "poll", protocol: "demoswap" });
    expectNodeNotAsked();
  });

  test("behavior: a hint wins only for a protocol the transaction touches", async () => {
    const hinted = await txs.disperseWeth(2);
    const a = await post({ txHash: hinted, protocol: "demoswap" });
    expect(a.body.transaction).toMatchObject({ protocol: "demoswap", source: "track" });
    const swap = await txs.swap(3);
    const b = await post({ txHash: swap, protocol: "demovault" });
    expect(b.body.transaction).toMatchObject({ protocol: "demoswap", source: "track" });
    const unrelated = await txs.unrelated(3);
    expect((await post({ txHash: unrelated, protocol: "demoswap" })).status).toBe(422);
  });

  test("behavior: pending in the mempool is 202, then the watcher stores it once mined and it is broadcast", async () => {
    const ws = new WebSocket(`${server.url.replace("http", "ws")}/ws`);
    const messages: Json[] = [];
    ws.on("message", (data) => messages.push(JSON.parse(data.toString("utf8")) as Json));
    await new Promise<void>((resolve, reject) => ws.on("open", resolve).on("error", reject));
    try {
      ws.send(JSON.stringify({ op: "subscribe", topic: "transactions", id: 1 }));
      await waitFor(
        async () => messages,
        (m) => m.some((x) => x.type === "subscribed"),
        "subscribed",
      );

      await txs.setAutomine(false);
      const hash = await txs.disperseEther(4);
      const reply = await post({ txHash: hash, protocol: "demovault" });
      expect(reply.status).toBe(202);
      expect(reply.body).toEqual({ status: "pending", txHash: hash.toLowerCase() });
      expect(await getTracked(db.database.db, hash)).toMatchObject({
        status: "pending",
        protocolHint: "demovault",
      });
      expect((await getTx(hash)).status).toBe(404);

      const minedAt = Date.now();
      await txs.mine();
      const stored = await storedByWatcher(hash);
      expect(Date.now() - minedAt).toBeLessThan(5_000);
      expect(stored.body).toMatchObject({
        source: "track",
        protocol: "demovault",
        functionName: "disperseEther",
      });
      await waitFor(
        () => getTracked(db.database.db, hash),
        (w) => w?.status === "indexed",
        "the watch entry to be marked indexed",
      );
      const message = await waitFor(
        async () => messages.find((m) => m.type === "transaction" && m.data.txHash === hash.toLowerCase()),
        (m) => m !== undefined,
        "the broadcast",
      );
      expect(message).toEqual({ type: "transaction", topic: "transactions", data: stored.body });
      // Tracked again now: stored.
      expect(await post({ txHash: hash })).toMatchObject({ status: 200, body: { status: "indexed" } });
    } finally {
      ws.close();
    }
  });

  test("behavior: an unknown hash is 202 and expires after 10 minutes (fake clock)", async () => {
    const hash = `0x${"5e".repeat(32)}`;
    const reply = await post({ txHash: hash });
    expect(reply.status).toBe(202);
    expect(reply.body).toEqual({ status: "pending", txHash: hash });
    const watch = await getTracked(db.database.db, hash);
    expect(watch?.status).toBe("pending");
    expect(watch!.expiresAt.getTime() - watch!.createdAt.getTime()).toBe(10 * MINUTE);
    clockOffsetMs = 9 * MINUTE;
    await new Promise((resolve) => setTimeout(resolve, 400)); // a few watcher passes
    expect((await getTracked(db.database.db, hash))?.status).toBe("pending");
    clockOffsetMs = 10 * MINUTE + 1_000;
    await waitFor(
      () => getTracked(db.database.db, hash),
      (w) => w?.status === "expired",
      "expiry",
    );
    // Submitted again: watched anew.
    expect((await post({ txHash: hash })).status).toBe(202);
    expect((await getTracked(db.database.db, hash))?.status).toBe("pending");
  });

  test("error: a mined transaction touching nothing configured is 422 NOT_RELEVANT and not stored", async () => {
    const hash = (await txs.unrelated(2)).toLowerCase();
    const reply = await post({ txHash: hash });
    expect(reply.status).toBe(422);
    expect(reply.headers.get("content-type")).toContain("application/problem+json");
    expect(reply.body).toEqual(
      problem(
        "NOT_RELEVANT",
        "Transaction not relevant",
        422,
        `transaction ${hash} touches no configured contract or tracked token; it is not stored`,
      ),
    );
    expect((await getTx(hash)).status).toBe(404);
  });

  test("error: bad bodies are 400 naming the field, non-JSON is 415", async () => {
    const cases: [unknown, string, string][] = [
      [[], "INVALID_BODY", 'body: must be a JSON object with "txHash"'],
      ['"0xabc"', "INVALID_BODY", 'body: must be a JSON object with "txHash"'],
      ["null", "INVALID_BODY", 'body: must be a JSON object with "txHash"'],
      [{}, "INVALID_BODY", "txHash: is required"],
      [{ protocol: "demoswap" }, "INVALID_BODY", "txHash: is required"],
      [
        { txHash: "0x1234" },
        "INVALID_TX_HASH",
        "txHash: not a 32-byte hex transaction hash with a 0x prefix",
      ],
      [
        { txHash: `${"ab".repeat(32)}` },
        "INVALID_TX_HASH",
        "txHash: not a 32-byte hex transaction hash with a 0x prefix",
      ],
      [
        { txHash: `0x${"zz".repeat(32)}` },
        "INVALID_TX_HASH",
        "txHash: not a 32-byte hex transaction hash with a 0x prefix",
      ],
      [{ txHash: ["0x"] }, "INVALID_TX_HASH", "txHash: not a 32-byte hex transaction hash with a 0x prefix"],
      [{ txHash: `0x${"ab".repeat(32)}`, extra: 1 }, "INVALID_BODY", "extra: is not a known field"],
      [
        { txHash: `0x${"ab".repeat(32)}`, protocol: "nope" },
        "INVALID_BODY",
        'protocol: no configured protocol has the id "nope"',
      ],
      [
        { txHash: `0x${"ab".repeat(32)}`, protocol: "" },
        "INVALID_BODY",
        expect.stringMatching(/^protocol: /),
      ],
      ["{not json", "INVALID_BODY", expect.stringMatching(/^body: /)],
    ];
    for (const [body, code, detail] of cases) {
      const reply = await post(body);
      expect({ body, status: reply.status }).toEqual({ body, status: 400 });
      const title = code === "INVALID_TX_HASH" ? "Invalid transaction hash" : "Invalid request body";
      expect(reply.body).toEqual({ ...problem(code, title, 400, ""), detail });
      expect(reply.headers.get("content-type")).toContain("application/problem+json");
    }
    const text = await fetch(`${server.url}/api/track-tx`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: `0x${"ab".repeat(32)}`,
    });
    expect(text.status).toBe(415);
    expect(((await text.json()) as Json).code).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(await getTracked(db.database.db, `0x${"ab".repeat(32)}`)).toBeNull();
  });

  test("error: the node down is 503 UPSTREAM_UNAVAILABLE; the hash is watched and stored once the node is back", async () => {
    const hash = (await txs.disperseEther(3)).toLowerCase();
    proxy.inject({ kind: "http", status: 502, body: "bad gateway" });
    const reply = await post({ txHash: hash });
    expect(reply.status).toBe(503);
    expect(reply.body).toEqual(
      problem(
        "UPSTREAM_UNAVAILABLE",
        "Upstream unavailable",
        503,
        `the node could not be asked about ${hash}; it is watched for 10 minutes and indexed once mined`,
      ),
    );
    expect(JSON.stringify(reply.body)).not.toContain("127.0.0.1");
    expect(await getTracked(db.database.db, hash)).toMatchObject({ status: "pending", lastCheckedAt: null });
    proxy.clearFaults();
    const stored = await storedByWatcher(hash);
    expect(stored.body).toMatchObject({ source: "track", protocol: "demovault" });
  });

  test("error: its block stored under another hash (an orphan not rolled back yet) is 503 saying so; watched", async () => {
    const hash = (await txs.disperseEther(2)).toLowerCase() as Hash;
    const number = Number((await chainClient.client.getTransactionReceipt({ hash })).blockNumber);
    // What a webhook stored from a block a reorg replaced, before polling reaches it and rolls it back.
    await db.database.db.insert(blocks).values({
      number,
      hash: `0x${"ee".repeat(32)}`,
      parentHash: `0x${"dd".repeat(32)}`,
      timestamp: new Date(),
    });
    try {
      const reply = await post({ txHash: hash });
      expect(reply.status).toBe(503);
      expect(reply.body).toEqual(
        problem(
          "UPSTREAM_UNAVAILABLE",
          "Upstream unavailable",
          503,
          `the chain reorganized under the block of ${hash}; it is watched for 10 minutes and indexed once its block is settled`,
        ),
      );
      expect(await getTracked(db.database.db, hash)).toMatchObject({ status: "pending" });
    } finally {
      await db.database.db.delete(blocks).where(eq(blocks.number, number));
    }
    // The orphan gone, the watcher stores it (and broadcasts it now, not during the next test).
    const stored = await storedByWatcher(hash);
    expect(stored.body).toMatchObject({ source: "track" });
  });

  test("behavior: 20 identical requests at once store the transaction once", async () => {
    const hash = await txs.disperseEther(1);
    const before = published.length;
    const replies = await Promise.all(Array.from({ length: 20 }, () => post({ txHash: hash })));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200));
    for (const r of replies) expect(r.body).toEqual(replies[0]!.body);
    expect(replies[0]!.body.transaction).toEqual((await getTx(hash)).body);
    const broadcasts = published.slice(before).filter((e) => e.type === "transaction");
    expect(broadcasts.map((e) => e.type === "transaction" && e.transaction.hash.toLowerCase())).toEqual([
      hash.toLowerCase(),
    ]);
  });

  test("behavior: a tracked transaction removed by a reorg is watched again and stored once mined again", async () => {
    const hash = (await txs.disperseEther(0)).toLowerCase() as Hash;
    expect((await post({ txHash: hash })).body.transaction).toMatchObject({ source: "track" });
    await catchUp(); // polling records the block hashes up to the head
    const raw = await rawTransaction(chain.anvil.url, hash);
    const before = published.length;
    await reorgChain(chain.anvil.url, 1, []); // the block holding it is replaced by an empty one
    await txs.mine();
    await catchUp(); // sees the new parent hash: rolls the orphaned block back
    expect(published.slice(before)).toContainEqual({
      type: "removed",
      removed: expect.objectContaining({ hash, source: "track", protocol: "demovault" }),
    });
    expect((await getTx(hash)).status).toBe(404);
    const watch = await waitFor(
      () => getTracked(db.database.db, hash),
      (w) => w?.status === "pending",
      "the removed transaction to be watched again",
    );
    expect(watch).toMatchObject({ protocolHint: "demovault" });
    await sendRawTransaction(chain.anvil.url, raw);
    const stored = await storedByWatcher(hash, "the watcher to store it again");
    expect(stored.body).toMatchObject({ source: "track", protocol: "demovault" });
    // The watcher marks the entry after the ingest commit, so the stored row can be read a moment earlier.
    await waitFor(
      () => getTracked(db.database.db, hash),
      (w) => w?.status === "indexed",
      "the watch entry to be marked indexed",
    );
  });

  test("behavior: a webhook transaction removed by a reorg is watched again and stored again as a webhook one", async () => {
    const hash = (await txs.disperseEther(0)).toLowerCase() as Hash;
    // Stored by the webhook pipeline (the same ingest call the inbox worker makes).
    expect(await ingest.ingestHashes([hash], "webhook")).toEqual([
      { hash, status: "indexed", inserted: true },
    ]);
    expect((await getTx(hash)).body).toMatchObject({ source: "webhook", protocol: "demovault" });
    await catchUp();
    const raw = await rawTransaction(chain.anvil.url, hash);
    await reorgChain(chain.anvil.url, 1, []);
    await txs.mine();
    await catchUp();
    expect((await getTx(hash)).status).toBe(404);
    const watch = await waitFor(
      () => getTracked(db.database.db, hash),
      (w) => w?.status === "pending",
      "the removed transaction to be watched again",
    );
    expect(watch).toMatchObject({ source: "webhook", protocolHint: null });
    await sendRawTransaction(chain.anvil.url, raw);
    const stored = await storedByWatcher(hash, "the watcher to store it again");
    expect(stored.body).toMatchObject({ source: "webhook", protocol: "demovault" });
    await waitFor(
      () => getTracked(db.database.db, hash),
      (w) => w?.status === "indexed",
      "the watch entry to be marked indexed",
    );
  });

  test("behavior: with api.trackTxApiKeys set, X-API-Key must match one of them (checked before the body)", async () => {
    const keyed = await startServer({
      ...common.config,
      api: { ...common.config.api, trackTxApiKeys: ["key-one", "key-two"] },
    });
    const hash = await txs.disperseEther(2);
    const missing = await post({ txHash: hash }, {}, keyed);
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual(
      problem("UNAUTHORIZED", "Missing or invalid API key", 401, "an X-API-Key header is required"),
    );
    const wrong = await post({ txHash: hash }, { "x-api-key": "key-three" }, keyed);
    expect(wrong.body).toEqual(
      problem("UNAUTHORIZED", "Missing or invalid API key", 401, "X-API-Key does not match a configured key"),
    );
    expect((await post("{broken", { "x-api-key": "nope" }, keyed)).status).toBe(401);
    expect((await getTx(hash)).status).toBe(404);
    const ok = await post({ txHash: hash }, { "x-api-key": "key-two" }, keyed);
    expect(ok.status).toBe(200);
    expect(ok.body.transaction.txHash).toBe(hash.toLowerCase());
    expect(JSON.stringify(ok.body)).not.toContain("key-two");
    const document = (await (await fetch(`${keyed.url}/openapi.json`)).json()) as Json;
    expect(document.paths["/api/track-tx"].post.security).toEqual([{ apiKey: [] }]);
    // The open server documents no key.
    const open = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json;
    expect(open.paths["/api/track-tx"].post.security).toEqual([]);
  });

  test("behavior: rate limited per client IP with the reads: 429 with Retry-After", async () => {
    const limited = await startServer({
      ...common.config,
      api: { ...common.config.api, rateLimitPerMinute: 3 },
    });
    const body = { txHash: `0x${"77".repeat(32)}` };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(body, {}, limited)).status);
    expect(statuses).toEqual([202, 202, 202, 429]);
    const over = await post(body, {}, limited);
    expect(over.status).toBe(429);
    expect(over.body.code).toBe("RATE_LIMITED");
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("startProtoscan wires track-tx and its watcher (role all)", () => {
  test("default: a pending transaction submitted to the running server is stored once mined", {
    timeout: 120_000,
  }, async () => {
    const chain = await setupDemoChain();
    // On PostgreSQL the server connects to a fresh test database; on PGlite it keeps its own in memory.
    const db = await createTestDatabase();
    const dbUrl = db.url;
    const protoscan = await startProtoscan({
      config: chain.config,
      role: "all",
      host: "127.0.0.1",
      port: 0,
      ...(dbUrl ? { databaseUrl: dbUrl } : {}),
      dataDir: "memory://",
      logLevel: "silent",
    }).catch(async (error: unknown) => {
      await db.cleanup();
      await chain.anvil.stop();
      throw error;
    });
    const txs = trackTxs(chain);
    try {
      expect(protoscan.trackWatcher).not.toBeNull();
      await txs.setAutomine(false);
      const hash = await txs.disperseEther(0);
      const reply = await fetch(`${protoscan.url}/api/track-tx`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ txHash: hash }),
      });
      expect(reply.status).toBe(202);
      await txs.mine();
      const minedAt = Date.now();
      let status = 0;
      let body: Json = {};
      while (Date.now() - minedAt < 10_000) {
        const response = await fetch(`${protoscan.url}/api/tx/${hash}`);
        status = response.status;
        body = (await response.json()) as Json;
        if (status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toBe(200);
      expect(Date.now() - minedAt).toBeLessThan(5_000); // re-checked at least every 5 s
      expect(body).toMatchObject({ txHash: hash.toLowerCase(), source: "track", protocol: "demovault" });
    } finally {
      await txs.setAutomine(true).catch(() => {});
      await protoscan.stop();
      await db.cleanup();
      await chain.anvil.stop();
    }
  });
});
