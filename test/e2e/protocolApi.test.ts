import type { FastifyInstance } from "fastify";
import { createPublicClient, http } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { resolveConfig } from "../../src/config/resolveConfig.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { demoConfigFile } from "../../src/demo/demoConfig.ts";
import { deployDemo } from "../../src/demo/deploy.ts";
import { type Anvil, startTestAnvil } from "../helpers/anvil.ts";
import {
  cursorPages,
  type ExpectedTransaction,
  eip55,
  newestFirst,
  offsetPages,
  readExpectedTransactions,
} from "../helpers/chainActivity.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import type { DemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

type TxJson = {
  txHash: string;
  blockNumber: number;
  transactionIndex: number;
  blockTimestamp: string;
  fromAddress: string;
  toAddress: string | null;
  status: boolean;
  protocol: string;
  actionType: string;
  tokenTransfers: { tokenAddress: string; fromAddress: string; toAddress: string; amount: string }[];
};
type ProtocolPage = { protocol: string; transactions: TxJson[]; nextCursor: string | null };

describe("GET /api/protocol/:id/stats, /api/protocol/:id/transactions, /api/overview, /api/stats", () => {
  let anvil: Anvil | undefined;
  let chain: DemoChain;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let app: FastifyInstance;
  let expected: ExpectedTransaction[];
  const get = (url: string) => app.inject({ method: "GET", url });

  beforeAll(async () => {
    // Kept apart from the deployment, so that afterAll stops the node even when a slow setup times out.
    anvil = await startTestAnvil();
    const deployment = await deployDemo({ rpcUrl: anvil.url });
    const configFile = demoConfigFile(deployment, { rpcUrl: anvil.url });
    chain = { anvil, deployment, configFile, config: resolveConfig(configFile, null) };
    // 45 transactions from 5 senders, 6 to a block: many blocks hold several (keyset ties on the block).
    await generateTransactions({
      rpcUrl: chain.anvil.url,
      deployment: chain.deployment,
      count: 45,
      perBlock: 6,
    });
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config: chain.config, database: db.database });
    const head = await pipeline.catchUp();
    expected = await readExpectedTransactions(
      chain.anvil.url,
      chain.config,
      chain.deployment.startBlock,
      head,
    );
    app = await buildApp(pipeline.common, {
      database: db.database,
      chain: pipeline.chain,
      indexerStatus: pipeline.indexer.status,
    });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await pipeline?.close();
    await db?.cleanup();
    await anvil?.stop();
  });

  const ofProtocol = (id: string) => newestFirst(expected.filter((t) => t.protocol === id));

  test("default: protocol stats count the chain's transactions and distinct senders", async () => {
    expect(expected.length).toBeGreaterThan(45);
    for (const protocol of chain.config.protocols) {
      const mine = ofProtocol(protocol.id);
      expect(mine.length).toBeGreaterThan(0);
      const before = Date.now();
      const response = await get(`/api/protocol/${protocol.id}/stats`);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      // tvl and dailyVolume are checked against the chain in usdStats.test.ts.
      expect(body).toEqual({
        protocol: protocol.id,
        tvl: expect.any(Number),
        dailyVolume: expect.any(Number),
        uniqueUsers: new Set(mine.map((t) => t.from)).size,
        transactionCount: mine.length,
        updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
      // When the figures were computed: the USD statistics are served for up to 5 s.
      expect(Date.parse(body.updatedAt)).toBeGreaterThanOrEqual(before - 5_000);
      expect(Date.parse(body.updatedAt)).toBeLessThanOrEqual(Date.now());
    }
    // The id is matched case-insensitively and answered in its configured form.
    expect((await get("/api/protocol/DemoSwap/stats")).json().protocol).toBe("demoswap");
  });

  test("default: protocol transactions are the chain's, newest first, field by field", async () => {
    const mine = ofProtocol("demoswap");
    const response = await get("/api/protocol/demoswap/transactions");
    expect(response.statusCode).toBe(200);
    const body = response.json() as ProtocolPage;
    expect(body.protocol).toBe("demoswap");
    expect(body.transactions).toHaveLength(Math.min(25, mine.length));
    body.transactions.forEach((tx, i) => {
      const e = mine[i]!;
      expect(tx).toMatchObject({
        txHash: e.hash,
        blockNumber: e.blockNumber,
        transactionIndex: e.transactionIndex,
        blockTimestamp: new Date(e.timestamp).toISOString(),
        fromAddress: eip55(e.from),
        toAddress: eip55(e.to),
        status: e.status,
        protocol: "demoswap",
      });
      expect(tx.tokenTransfers.map((t) => [t.tokenAddress, t.fromAddress, t.toAddress, t.amount])).toEqual(
        e.transfers.map((t) => [eip55(t.token), eip55(t.from), eip55(t.to), t.amount.toString()]),
      );
    });
    // Each item is exactly the Transaction resource of GET /api/tx/:hash.
    for (const tx of body.transactions.slice(0, 5)) {
      expect(tx).toEqual((await get(`/api/tx/${tx.txHash}`)).json());
    }
    expect(mine.length).toBeGreaterThan(25);
    expect(body.nextCursor).toEqual(expect.any(String));
  });

  test("behavior: cursor pages and offset pages are disjoint and cover everything", async () => {
    for (const protocol of ["demoswap", "demovault"]) {
      const want = ofProtocol(protocol).map((t) => t.hash);
      const byCursor = await cursorPages<ProtocolPage>(get, `/api/protocol/${protocol}/transactions`, 7);
      const byOffset = await offsetPages<ProtocolPage>(get, `/api/protocol/${protocol}/transactions`, 7);
      const cursorHashes = byCursor.flatMap((p) => p.transactions.map((t) => t.txHash));
      const offsetHashes = byOffset.flatMap((p) => p.transactions.map((t) => t.txHash));
      expect(cursorHashes).toEqual(want);
      expect(offsetHashes).toEqual(want);
      expect(new Set(cursorHashes).size).toBe(want.length);
      expect(byCursor.slice(0, -1).every((p) => p.transactions.length === 7)).toBe(true);
      expect(byCursor.at(-1)!.nextCursor).toBeNull();
    }
  });

  test("args: actionType keeps only that action, still newest first", async () => {
    const all = (await cursorPages<ProtocolPage>(get, "/api/protocol/demoswap/transactions", 100)).flatMap(
      (p) => p.transactions,
    );
    const swaps = (
      await cursorPages<ProtocolPage>(get, "/api/protocol/demoswap/transactions?actionType=swap", 4)
    ).flatMap((p) => p.transactions);
    // The generator sends swapExactTokensForTokens to the router in 2 of every 5 rounds per sender.
    const router = chain.deployment.contracts.router.toLowerCase();
    const client = createPublicClient({ transport: http(chain.anvil.url) });
    let routerSwaps = 0;
    for (const e of ofProtocol("demoswap").filter((t) => t.to === router)) {
      const tx = await client.getTransaction({ hash: e.hash as `0x${string}` });
      if (tx.input.startsWith("0x38ed1739")) routerSwaps++; // swapExactTokensForTokens selector
    }
    expect(routerSwaps).toBeGreaterThan(0);
    expect(swaps).toHaveLength(routerSwaps);
    expect(swaps.map((t) => t.txHash)).toEqual(
      all.filter((t) => t.actionType === "swap").map((t) => t.txHash),
    );
    const none = (await get("/api/protocol/demoswap/transactions?actionType=nothing")).json();
    expect(none).toEqual({ protocol: "demoswap", transactions: [], nextCursor: null });
  });

  test("default: overview lists protocols, totals, the 5 latest transactions and the indexer", async () => {
    const head = Number(await pipeline.chain.client.getBlockNumber({ cacheTime: 0 }));
    const response = await get("/api/overview");
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.protocols).toEqual(
      chain.config.protocols.map((p) => ({
        id: p.id,
        name: p.name,
        tvl: expect.any(Number),
        dailyVolume: expect.any(Number),
        uniqueUsers: new Set(ofProtocol(p.id).map((t) => t.from)).size,
        transactionCount: ofProtocol(p.id).length,
        updatedAt: expect.any(String),
      })),
    );
    expect(body.totals).toEqual({
      transactions: expected.length,
      tokenTransfers: expected.reduce((n, t) => n + t.transfers.length, 0),
      addresses: new Set(expected.flatMap((t) => [...t.parties])).size,
      tokens: chain.config.tokens.length,
    });
    const latest = newestFirst(expected).slice(0, 5);
    expect(body.latestTransactions.map((t: TxJson) => t.txHash)).toEqual(latest.map((t) => t.hash));
    expect(body.latestTransactions[0]).toEqual((await get(`/api/tx/${latest[0]!.hash}`)).json());
    expect(body.indexer).toEqual({
      chainHead: head,
      indexedBlock: head,
      lagBlocks: 0,
      lastRunAt: expect.stringMatching(/Z$/),
    });
  });

  test("default: global stats are the chain's totals", async () => {
    const body = (await get("/api/stats")).json();
    const dayAgo = Date.now() - 24 * 3600 * 1000;
    expect(body).toMatchObject({
      totalTransactions: expected.length,
      totalTokenTransfers: expected.reduce((n, t) => n + t.transfers.length, 0),
      uniqueAddresses: new Set(expected.flatMap((t) => [...t.parties])).size,
      trackedTokens: chain.config.tokens.length,
      protocols: chain.config.protocols.length,
      last24h: {
        transactions: expected.filter((t) => t.timestamp >= dayAgo).length,
        volumeUsd: expect.any(Number),
      },
    });
    expect(body.totalTransactions).toBe(pipeline.events.filter((e) => e.type === "transaction").length);
  });

  test("error: unknown protocol is 404 PROTOCOL_NOT_FOUND", async () => {
    for (const url of ["/api/protocol/nope/stats", "/api/protocol/nope/transactions"]) {
      const response = await get(url);
      expect(response.statusCode).toBe(404);
      expect(response.headers["content-type"]).toContain("application/problem+json");
      expect(response.json()).toEqual({
        type: "/docs/errors#PROTOCOL_NOT_FOUND",
        title: "Protocol not found",
        status: 404,
        detail: "no protocol 'nope' is configured",
        code: "PROTOCOL_NOT_FOUND",
      });
    }
  });

  test("error: bad limit, offset and cursor are 400 INVALID_PARAMETER naming the parameter", async () => {
    const cases: [string, string][] = [
      ["limit=0", "limit"],
      ["limit=-1", "limit"],
      ["limit=abc", "limit"],
      ["limit=2.5", "limit"],
      ["limit=101", "limit"],
      ["limit=1000", "limit"],
      ["offset=10001", "offset"],
      ["offset=-1", "offset"],
      ["cursor=garbage!", "cursor"],
      ["cursor=djE6MTI", "cursor"],
      [`offset=5&cursor=${encodeURIComponent(btoa("v1:10:0").replace(/=+$/, ""))}`, "cursor"],
    ];
    for (const [query, param] of cases) {
      const response = await get(`/api/protocol/demoswap/transactions?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.headers["content-type"]).toContain("application/problem+json");
      expect(response.json()).toMatchObject({ code: "INVALID_PARAMETER", status: 400 });
      expect(response.json().detail, query).toMatch(new RegExp(`^${param}: `));
    }
  });

  test("error: U+0000 in a text parameter is 400 INVALID_PARAMETER naming it, not a database error", async () => {
    // PostgreSQL cannot compare text holding U+0000: before the guard these answered 500 there.
    const cases: [string, string][] = [
      ["/api/protocol/demoswap/transactions?actionType=%00", "actionType"],
      ["/api/protocol/demoswap/transactions?actionType=swap%00", "actionType"],
      ["/api/transactions/recent?protocol=demo%00swap", "protocol"],
      ["/api/transactions/recent?actionType=%00", "actionType"],
      ["/api/search?q=DEMO%00", "q"],
      ["/api/protocol/demo%00swap/stats", "protocolId"],
    ];
    for (const [url, param] of cases) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      expect(response.headers["content-type"]).toContain("application/problem+json");
      expect(response.json(), url).toMatchObject({
        code: "INVALID_PARAMETER",
        detail: `${param}: must not contain the character U+0000 (%00)`,
      });
    }
    // The hash parameters keep their own codes: their pattern refuses the value first.
    expect((await get("/api/tx/%00")).json()).toMatchObject({ code: "INVALID_TX_HASH" });
  });

  test("behavior: a cursor page stays stable while new transactions arrive", async () => {
    const first = (await get("/api/protocol/demoswap/transactions?limit=10")).json() as ProtocolPage;
    const before = ofProtocol("demoswap").map((t) => t.hash);
    await generateTransactions({
      rpcUrl: chain.anvil.url,
      deployment: chain.deployment,
      count: 10,
      perBlock: 3,
    });
    const head = await pipeline.catchUp();
    const pages: ProtocolPage[] = [first];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = (
        await get(`/api/protocol/demoswap/transactions?limit=10&cursor=${cursor}`)
      ).json() as ProtocolPage;
      pages.push(page);
      cursor = page.nextCursor;
    }
    expect(pages.flatMap((p) => p.transactions.map((t) => t.txHash))).toEqual(before);
    // The new transactions are on top of a fresh first page, and the counts moved with them.
    const now = await readExpectedTransactions(
      chain.anvil.url,
      chain.config,
      chain.deployment.startBlock,
      head,
    );
    const fresh = (await get("/api/protocol/demoswap/transactions?limit=3")).json() as ProtocolPage;
    const newest = newestFirst(now.filter((t) => t.protocol === "demoswap"));
    expect(fresh.transactions.map((t) => t.txHash)).toEqual(newest.slice(0, 3).map((t) => t.hash));
    expect((await get("/api/protocol/demoswap/stats")).json().transactionCount).toBe(newest.length);
  });
});
