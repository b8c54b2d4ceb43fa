import { createRequire } from "node:module";
import type { FastifyInstance } from "fastify";
import {
  createPublicClient,
  decodeEventLog,
  erc20Abi,
  type Hash,
  http,
  parseEther,
  parseUnits,
  type TransactionReceipt,
} from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { transactionJsonOf } from "../../src/api/toTransactionJson.ts";
import { type ChainClient, createChainClient } from "../../src/chain/createChainClient.ts";
import type { Address } from "../../src/config/schema.ts";
import type { DemoDeployment } from "../../src/demo/deploy.ts";
import { createIndexer, type Indexer } from "../../src/indexer/createIndexer.ts";
import { type Broadcaster, createLocalBroadcaster, type IngestEvent } from "../../src/ingest/broadcaster.ts";
import { createIngest } from "../../src/ingest/createIngest.ts";
import type { Common } from "../../src/internal/common.ts";
import { createSilentLogger } from "../../src/internal/logger.ts";
import { createMetrics } from "../../src/internal/metrics.ts";
import { createShutdown } from "../../src/internal/shutdown.ts";
import { createPriceHistory } from "../../src/prices/createPriceHistory.ts";
import { createTransactionValuer } from "../../src/prices/transactionValues.ts";
import { createHub, type Hub, type HubOptions } from "../../src/realtime/createHub.ts";
import { valueEvents } from "../../src/realtime/valueEvents.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import {
  nativeTransfer,
  ownerMint,
  swapExact,
  tokenTransfer,
  vaultClaim,
  vaultDeposit,
} from "../helpers/demoTxs.ts";
import { type ChainBlock, mineBlock, reorgChain } from "../helpers/reorg.ts";

// The project has no @types/ws; this is the part of the `ws` client API the tests use.
type WsClient = {
  readonly readyState: number;
  send(data: string | Buffer): void;
  close(code?: number): void;
  pause(): void;
  resume(): void;
  on(event: "message", listener: (data: Buffer, isBinary: boolean) => void): WsClient;
  on(event: "close", listener: (code: number, reason: Buffer) => void): WsClient;
  on(event: "open", listener: () => void): WsClient;
  on(event: "error", listener: (error: Error) => void): WsClient;
};
type WsClientConstructor = new (url: string, options?: { autoPong?: boolean }) => WsClient;
const WebSocket = createRequire(import.meta.url)("ws") as WsClientConstructor;

// biome-ignore lint/suspicious/noExplicitAny: server messages are arbitrary JSON, asserted field by field
type Message = Record<string, any>;

type TestClient = {
  ws: WsClient;
  messages: Message[];
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
  /** the next message (from now on) satisfying `predicate` */
  next(predicate?: (m: Message) => boolean): Promise<Message>;
  /** the `transaction` / `removed` messages received so far */
  events(): Message[];
};

async function connect(url: string, options: { autoPong?: boolean } = {}): Promise<TestClient> {
  const ws = new WebSocket(url, options);
  const messages: Message[] = [];
  const waiters: { predicate: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString("utf8")) as Message;
    messages.push(message);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(message)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString("utf8") })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.on("open", resolve);
    ws.on("error", reject);
  });
  return {
    ws,
    messages,
    closed,
    send: (message) => ws.send(typeof message === "string" ? message : JSON.stringify(message)),
    next: (predicate = () => true) =>
      withTimeout(new Promise<Message>((resolve) => waiters.push({ predicate, resolve })), "next message"),
    events: () => messages.filter((m) => m.type === "transaction" || m.type === "removed"),
  };
}

async function subscribe(client: TestClient, topic: string, id: unknown = topic): Promise<Message> {
  const reply = client.next((m) => m.type !== "transaction" && m.type !== "removed" && m.id === id);
  client.send({ op: "subscribe", topic, id });
  return reply;
}

function withTimeout<T>(promise: Promise<T>, what: string, ms = 15_000): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms).unref(),
    ),
  ]);
}

async function waitFor(condition: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ZERO = "0x0000000000000000000000000000000000000000";

/** One API process as `startProtoscan` wires it (database, chain, ingest, indexer, hub, app), on a free port. */
type Server = { common: Common; hub: Hub; app: FastifyInstance; wsUrl: string; close(): Promise<void> };

describe("WebSocket /ws (SPEC §5)", () => {
  let chain: DemoChain;
  let d: DemoDeployment;
  let db: TestDatabase;
  let common: Common;
  let chainClient: ChainClient;
  let broadcaster: Broadcaster;
  let indexer: Indexer;
  const published: IngestEvent[] = [];
  let server: Server;
  const servers: Server[] = [];
  const clients: TestClient[] = [];

  async function startServer(options: Partial<HubOptions> = {}): Promise<Server> {
    const shutdown = createShutdown();
    const own: Common = { ...common, metrics: createMetrics(), shutdown };
    // As the CLI wires it: the hub's transactions carry their USD values at block time, like GET /api/tx.
    const history = createPriceHistory(own, { db: db.database.db, chain: chainClient });
    const transactionJson = transactionJsonOf(own.config);
    const value = createTransactionValuer(own.config, history);
    const source = valueEvents(broadcaster, { transactionJson, value, logger: own.logger });
    const hub = createHub(own, { source, transactionJson, options });
    hub.start();
    const app = await buildApp(own, {
      database: db.database,
      chain: chainClient,
      indexerStatus: () => indexer.status(),
      hub,
      history,
    });
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    const started: Server = {
      common: own,
      hub,
      app,
      wsUrl: `${address.replace("http", "ws")}/ws`,
      close: async () => {
        await app.close();
        await hub.stop();
      },
    };
    servers.push(started);
    return started;
  }

  async function client(url = server.wsUrl, options: { autoPong?: boolean } = {}): Promise<TestClient> {
    const c = await connect(url, options);
    clients.push(c);
    return c;
  }

  async function catchUp(): Promise<number> {
    for (let i = 0; i < 50; i++) {
      const result = await indexer.runCycle();
      if (result.ended === "caught-up" && result.indexedBlock >= result.target) return result.indexedBlock;
    }
    throw new Error("indexer did not catch up");
  }

  beforeAll(async () => {
    chain = await setupDemoChain();
    d = chain.deployment;
    db = await createTestDatabase();
    common = {
      config: chain.config,
      logger: createSilentLogger(),
      metrics: createMetrics(),
      shutdown: createShutdown(),
    };
    chainClient = createChainClient(common, { baseDelayMs: 20, maxDelayMs: 200 });
    broadcaster = createLocalBroadcaster();
    broadcaster.subscribe((event) => published.push(event));
    const ingest = await createIngest(common, { chain: chainClient, db: db.database.db, broadcaster });
    indexer = createIndexer(common, { chain: chainClient, db: db.database.db, ingest });
    await catchUp(); // the deployment, before any client connects
    server = await startServer();
  });

  afterAll(async () => {
    for (const c of clients) c.ws.close();
    for (const s of servers) await s.close().catch(() => {});
    await indexer?.stop();
    await common?.shutdown.kill();
    chainClient?.close();
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  const receipts = async (blocks: readonly ChainBlock[]): Promise<TransactionReceipt[]> => {
    const rpc = createPublicClient({ transport: http(chain.anvil.url) });
    const hashes = blocks.flatMap((b) => b.transactions);
    return Promise.all(hashes.map((hash) => rpc.getTransactionReceipt({ hash })));
  };

  /** Tracked-token Transfer logs of a receipt, decoded by the test itself. */
  const trackedTransfers = (receipt: TransactionReceipt) => {
    const tracked = new Set(Object.values(d.tokens).map((t) => t.address.toLowerCase()));
    return receipt.logs.flatMap((log) => {
      if (!tracked.has(log.address.toLowerCase()) || log.topics.length !== 3) return [];
      const event = decodeEventLog({ abi: erc20Abi, topics: log.topics, data: log.data });
      if (event.eventName !== "Transfer") return [];
      return [
        {
          token: log.address.toLowerCase(),
          from: event.args.from.toLowerCase(),
          to: event.args.to.toLowerCase(),
        },
      ];
    });
  };

  const partiesOf = (receipt: TransactionReceipt): Set<string> => {
    const parties = new Set<string>([receipt.from.toLowerCase()]);
    if (receipt.to) parties.add(receipt.to.toLowerCase());
    if (receipt.contractAddress) parties.add(receipt.contractAddress.toLowerCase());
    for (const t of trackedTransfers(receipt)) parties.add(t.from).add(t.to);
    parties.delete(ZERO);
    return parties;
  };

  const apiBody = async (hash: string) => {
    const response = await server.app.inject({ method: "GET", url: `/api/tx/${hash}` });
    expect(response.statusCode).toBe(200);
    return response.json() as Message;
  };

  test("default: each topic receives exactly its transactions, in block order, equal to GET /api/tx/:hash", async () => {
    const users = d.users as [Address, Address, Address, Address, Address];
    const [u0, u1, u2, u3, u4] = users;
    const all = await client();
    const vault = await client();
    const address = await client();
    const usdc = await client();
    const multi = await client();
    const dropped = await client();

    expect(await subscribe(all, "transactions", 1)).toEqual({
      type: "subscribed",
      topic: "transactions",
      id: 1,
    });
    expect(await subscribe(vault, "protocol:demovault", "v")).toEqual({
      type: "subscribed",
      topic: "protocol:demovault",
      id: "v",
    });
    // any case in, canonical lowercase out
    const upper = `0x${u1.slice(2).toUpperCase()}`;
    expect(await subscribe(address, `address:${upper}`, null)).toEqual({
      type: "subscribed",
      topic: `address:${u1.toLowerCase()}`,
      id: null,
    });
    await subscribe(usdc, `token:${d.tokens.USDC.address}`);
    await subscribe(multi, "transactions");
    await subscribe(multi, `token:${d.tokens.DEMO.address.toUpperCase().replace("0X", "0x")}`);
    await subscribe(dropped, "transactions");
    const unsubscribed = dropped.next((m) => m.type === "unsubscribed");
    dropped.send({ op: "unsubscribe", topic: "transactions", id: 9 });
    expect(await unsubscribed).toEqual({ type: "unsubscribed", topic: "transactions", id: 9 });

    // The expected protocol of each relevant transaction, known by construction; the native transfer is
    // irrelevant and must reach nobody.
    const blockA = [
      { tx: tokenTransfer(d, "DEMO", u0, u1, parseUnits("10", 18)), protocol: "demoswap" },
      { tx: swapExact(d, u2, ["DEMO", "USDC"], parseUnits("100", 18)), protocol: "demoswap" },
      { tx: vaultDeposit(d, u3, parseUnits("1000", 18)), protocol: "demovault" },
      { tx: nativeTransfer(u4, u0, parseEther("1")), protocol: null },
    ];
    const blockB = [
      { tx: ownerMint(d, "USDC", u1, parseUnits("77", 6)), protocol: "demoswap" },
      { tx: swapExact(d, u1, ["USDC", "WETH"], parseUnits("300", 6)), protocol: "demoswap" },
      { tx: vaultClaim(d, u3), protocol: "demovault" },
      { tx: tokenTransfer(d, "USDC", u3, u4, parseUnits("5", 6)), protocol: "demoswap" },
    ];
    const mined = [
      await mineBlock(
        chain.anvil.url,
        blockA.map((x) => x.tx),
      ),
    ];
    mined.push(
      await mineBlock(
        chain.anvil.url,
        blockB.map((x) => x.tx),
      ),
    );
    const protocolOf = new Map<string, string | null>(
      [...blockA, ...blockB].map((x, i) => [mined.flatMap((b) => b.transactions)[i]!, x.protocol]),
    );
    await catchUp();

    const chainReceipts = (await receipts(mined)).filter((r) => protocolOf.get(r.transactionHash) !== null);
    const hashesWhere = (predicate: (r: TransactionReceipt) => boolean) =>
      chainReceipts.filter(predicate).map((r) => r.transactionHash.toLowerCase());
    const expected = {
      all: hashesWhere(() => true),
      vault: hashesWhere((r) => protocolOf.get(r.transactionHash) === "demovault"),
      address: hashesWhere((r) => partiesOf(r).has(u1.toLowerCase())),
      usdc: hashesWhere((r) =>
        trackedTransfers(r).some((t) => t.token === d.tokens.USDC.address.toLowerCase()),
      ),
      demo: hashesWhere((r) =>
        trackedTransfers(r).some((t) => t.token === d.tokens.DEMO.address.toLowerCase()),
      ),
    };
    // The sets are distinct and non-trivial, so that a wrong filter cannot pass by accident.
    expect(expected.all).toHaveLength(7);
    expect(expected.vault).toHaveLength(2);
    expect(expected.address.length).toBeGreaterThanOrEqual(3);
    expect(expected.usdc.length).toBeGreaterThanOrEqual(4);
    expect(expected.demo.length).toBeGreaterThanOrEqual(3);

    await waitFor(
      () =>
        all.events().length >= expected.all.length &&
        vault.events().length >= expected.vault.length &&
        address.events().length >= expected.address.length &&
        usdc.events().length >= expected.usdc.length &&
        multi.events().length >= expected.all.length + expected.demo.length,
      "every client's transactions",
    );
    await sleep(200); // nothing more may arrive

    const received = (c: TestClient, topic: string) =>
      c
        .events()
        .filter((m) => m.topic === topic)
        .map((m) => m.data.txHash as string);
    expect(all.events().every((m) => m.type === "transaction" && m.topic === "transactions")).toBe(true);
    expect(received(all, "transactions")).toEqual(expected.all);
    expect(received(vault, "protocol:demovault")).toEqual(expected.vault);
    expect(received(address, `address:${u1.toLowerCase()}`)).toEqual(expected.address);
    expect(received(usdc, `token:${d.tokens.USDC.address.toLowerCase()}`)).toEqual(expected.usdc);
    expect(received(multi, "transactions")).toEqual(expected.all);
    expect(received(multi, `token:${d.tokens.DEMO.address.toLowerCase()}`)).toEqual(expected.demo);
    expect(multi.events()).toHaveLength(expected.all.length + expected.demo.length);
    expect(vault.events()).toHaveLength(expected.vault.length);
    expect(address.events()).toHaveLength(expected.address.length);
    expect(usdc.events()).toHaveLength(expected.usdc.length);
    expect(dropped.events()).toEqual([]);

    // data is the API's Transaction, byte for byte as JSON
    for (const message of [...all.events(), ...multi.events(), ...vault.events()]) {
      expect(message.data).toEqual(await apiBody(message.data.txHash));
    }
  });

  test("behavior: a reorg sends removed messages to the topics the orphaned transactions matched", async () => {
    const [u0, u1, u2, u3, u4] = d.users as [Address, Address, Address, Address, Address];
    const all = await client();
    const trader = await client();
    await subscribe(all, "transactions");
    await subscribe(trader, `address:${u2}`);

    const original = await mineBlock(chain.anvil.url, [
      swapExact(d, u2, ["DEMO", "USDC"], parseUnits("50", 18)),
      tokenTransfer(d, "DEMO", u0, u1, parseUnits("1", 18)),
    ]);
    await catchUp();
    await waitFor(() => all.events().length === 2 && trader.events().length === 1, "the original block");

    const reorg = await reorgChain(chain.anvil.url, 1, [
      { tx: { request: tokenTransfer(d, "USDC", u3, u4, parseUnits("2", 6)) }, blockOffset: 0 },
    ]);
    expect(reorg.orphaned).toEqual([original]);
    await catchUp();
    await waitFor(() => all.events().length === 5 && trader.events().length === 2, "removed messages");
    await sleep(200);

    const removed = (hash: string) => ({
      type: "removed",
      topic: "transactions",
      data: { txHash: hash, blockNumber: original.number, blockHash: original.hash },
    });
    const [swapHash, transferHash] = original.transactions as [Hash, Hash];
    const replacement = reorg.replacement[0]!.transactions[0]!;
    expect(all.events().slice(2, 4)).toEqual([removed(swapHash), removed(transferHash)]);
    expect(all.events()[4]).toMatchObject({ type: "transaction", topic: "transactions" });
    expect(all.events()[4]!.data).toEqual(await apiBody(replacement));
    expect(all.events()[4]!.data.blockHash).toBe(reorg.replacement[0]!.hash);
    expect(trader.events()[1]).toEqual({ ...removed(swapHash), topic: `address:${u2.toLowerCase()}` });
    const gone = await server.app.inject({ method: "GET", url: `/api/tx/${swapHash}` });
    expect(gone.statusCode).toBe(404);
  });

  test("error: bad frames get error messages echoing the id and the socket stays open", async () => {
    const c = await client();
    const cases: [frame: string | Buffer, code: string, id: unknown][] = [
      ["{not json", "INVALID_JSON", null],
      ["[1]", "INVALID_MESSAGE", null],
      [Buffer.from([1, 2, 3]), "INVALID_MESSAGE", null],
      [JSON.stringify({ op: "publish", id: "a" }), "UNKNOWN_OP", "a"],
      [JSON.stringify({ op: "subscribe", topic: "blocks", id: "b" }), "INVALID_TOPIC", "b"],
      [JSON.stringify({ op: "subscribe", topic: "address:0x1234", id: "c" }), "INVALID_TOPIC", "c"],
      [JSON.stringify({ op: "subscribe", id: "d" }), "INVALID_TOPIC", "d"],
      [JSON.stringify({ op: "subscribe", topic: "protocol:nope", id: "e" }), "UNKNOWN_TOPIC", "e"],
      [
        JSON.stringify({ op: "subscribe", topic: `token:0x${"12".repeat(20)}`, id: "f" }),
        "UNKNOWN_TOPIC",
        "f",
      ],
      [JSON.stringify({ op: "ping", id: "x".repeat(20 * 1024) }), "FRAME_TOO_LARGE", null],
    ];
    for (const [frame, code, id] of cases) {
      const reply = c.next();
      c.ws.send(frame);
      expect(await reply).toMatchObject({ type: "error", code, id });
      expect((await reply).message).toEqual(expect.any(String));
    }

    // 100 topics are fine, the 101st is refused, an existing one may be repeated, a freed slot reused
    for (let i = 0; i < 100; i++) {
      const reply = c.next((m) => m.id === i);
      c.send({ op: "subscribe", topic: `address:0x${i.toString(16).padStart(40, "0")}`, id: i });
      expect(await reply).toMatchObject({ type: "subscribed" });
    }
    const refused = c.next((m) => m.id === "101st");
    c.send({ op: "subscribe", topic: "transactions", id: "101st" });
    expect(await refused).toMatchObject({ type: "error", code: "TOO_MANY_TOPICS", id: "101st" });
    expect(await subscribe(c, `address:0x${"0".repeat(40)}`, "again")).toMatchObject({ type: "subscribed" });
    c.send({ op: "unsubscribe", topic: `address:0x${"0".repeat(40)}` });
    expect(await subscribe(c, "transactions", "reused")).toMatchObject({ type: "subscribed" });

    const pong = c.next();
    c.send({ op: "ping" });
    expect(await pong).toEqual({ type: "pong" });
    expect(c.ws.readyState).toBe(1);

    // Beyond 64 KiB the frame is not even read: ws closes with 1009 (message too big).
    c.ws.send("x".repeat(65 * 1024));
    expect((await withTimeout(c.closed, "close")).code).toBe(1009);
  });

  test("error: a plain GET /ws is a 400 problem", async () => {
    const response = await server.app.inject({ method: "GET", url: "/ws" });
    expect(response.statusCode).toBe(400);
    expect(response.headers["content-type"]).toContain("application/problem+json");
    expect(response.json()).toMatchObject({ code: "BAD_REQUEST", status: 400 });
    // the upgrade route is not an HTTP operation of the OpenAPI document
    const openapi = await server.app.inject({ method: "GET", url: "/openapi.json" });
    expect(openapi.statusCode).toBe(200);
    expect(Object.keys(openapi.json().paths)).not.toContain("/ws");
  });

  test("behavior: a client that stops reading is closed with 1013 while another receives everything", async () => {
    // Real transactions of this chain, broadcast again and again: bursts of 2,000 (about 1.8 MB) until the
    // paused client is dropped. The kernel's socket buffers absorb a few MB before the server's own send
    // buffer starts to grow, so the number of bursts that takes depends on the machine (here: 2-3).
    const transactions = published.filter((e) => e.type === "transaction");
    expect(transactions.length).toBeGreaterThan(10);
    const burst = Array.from({ length: 2_000 }, (_, i) => transactions[i % transactions.length]!);
    const slow = await client();
    const fast = await client();
    await subscribe(slow, "transactions");
    await subscribe(fast, "transactions");
    const before = server.hub.stats().connections;
    slow.ws.pause();

    let sent = 0;
    while (server.hub.stats().connections === before) {
      if (sent >= 20 * burst.length) throw new Error("the paused client was never dropped");
      broadcaster.publish(burst);
      sent += burst.length;
      await waitFor(() => fast.events().length === sent, "the fast client's burst", 30_000);
    }
    expect(server.hub.stats().connections).toBe(before - 1);
    expect(fast.events()).toHaveLength(sent);
    const expectedHashes = burst.map((e) =>
      e.type === "transaction" ? e.transaction.hash.toLowerCase() : "",
    );
    expect(fast.events().map((m) => m.data.txHash)).toEqual(
      Array.from({ length: sent / burst.length }, () => expectedHashes).flat(),
    );
    expect(fast.ws.readyState).toBe(1);

    // Once it reads again it gets what was buffered before the drop, then the close frame.
    slow.ws.resume();
    const closed = await withTimeout(slow.closed, "the slow client's close");
    expect(closed.code).toBe(1013);
    expect(slow.events().length).toBeGreaterThan(0);
    expect(slow.events().length).toBeLessThan(sent);
    const metrics = await server.common.metrics.registry.getSingleMetricAsString(
      "protoscan_ws_disconnects_total",
    );
    expect(metrics).toContain('protoscan_ws_disconnects_total{reason="slow"} 1');
  });

  test("behavior: heartbeat drops a peer that misses two pongs and keeps one that answers", async () => {
    const quick = await startServer({ pingIntervalMs: 100 });
    const mute = await client(quick.wsUrl, { autoPong: false });
    const alive = await client(quick.wsUrl);
    const closed = await withTimeout(mute.closed, "the mute peer's close", 5_000);
    expect(closed.code).toBe(1006); // terminated: an unresponsive peer gets no close handshake
    await sleep(400);
    expect(alive.ws.readyState).toBe(1);
    expect(quick.hub.stats().connections).toBe(1);
  });

  test("behavior: shutdown closes every socket with 1001", async () => {
    const other = await startServer();
    const a = await client(other.wsUrl);
    const b = await client(other.wsUrl);
    await subscribe(a, "transactions");
    await other.close();
    expect(await withTimeout(a.closed, "close a")).toMatchObject({ code: 1001 });
    expect(await withTimeout(b.closed, "close b")).toMatchObject({ code: 1001 });
    expect(other.hub.stats().connections).toBe(0);
  });
});
