import type { FastifyInstance } from "fastify";
import { type Address, createPublicClient, getAddress, http } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { createChainClient } from "../../src/chain/createChainClient.ts";
import { resolveConfig } from "../../src/config/resolveConfig.ts";
import type { TokenConfig } from "../../src/config/schema.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { findFreePort } from "../../src/demo/anvil.ts";
import { demoConfigFile } from "../../src/demo/demoConfig.ts";
import { deployDemo } from "../../src/demo/deploy.ts";
import { type Anvil, startTestAnvil } from "../helpers/anvil.ts";
import { type ExpectedTransaction, readExpectedTransactions } from "../helpers/chainActivity.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import type { DemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

describe("GET /api/search", () => {
  let anvil: Anvil | undefined;
  let chain: DemoChain;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let app: FastifyInstance;
  let expected: ExpectedTransaction[];
  const get = (url: string) => app.inject({ method: "GET", url });
  const search = async (q: string) => {
    const response = await get(`/api/search?q=${encodeURIComponent(q)}`);
    expect(response.statusCode, q).toBe(200);
    return response.json() as { query: string; results: Record<string, unknown>[] };
  };

  beforeAll(async () => {
    // Kept apart from the deployment, so that afterAll stops the node even when a slow setup times out.
    anvil = await startTestAnvil();
    const deployment = await deployDemo({ rpcUrl: anvil.url });
    const configFile = demoConfigFile(deployment, { rpcUrl: anvil.url });
    chain = { anvil, deployment, configFile, config: resolveConfig(configFile, null) };
    await generateTransactions({
      rpcUrl: chain.anvil.url,
      deployment: chain.deployment,
      count: 12,
      perBlock: 4,
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

  test("default: a transaction hash, any case, finds the stored transaction", async () => {
    const e = expected.at(-1)!;
    const q = `0x${e.hash.slice(2).toUpperCase()}`;
    const stored = (await get(`/api/tx/${e.hash}`)).json();
    expect(await search(q)).toEqual({
      query: q,
      results: [
        {
          type: "transaction",
          txHash: e.hash,
          blockNumber: e.blockNumber,
          blockTimestamp: new Date(e.timestamp).toISOString(),
          protocol: e.protocol,
          actionType: stored.actionType,
        },
      ],
    });
    expect(await search(`0x${"ab".repeat(32)}`)).toEqual({ query: `0x${"ab".repeat(32)}`, results: [] });
  });

  test("default: a block number or block hash finds the block's stored transactions", async () => {
    const blockNumber = expected.at(-1)!.blockNumber;
    const inBlock = expected.filter((t) => t.blockNumber === blockNumber);
    expect(inBlock.length).toBeGreaterThan(1);
    const block = await createPublicClient({ transport: http(chain.anvil.url) }).getBlock({
      blockNumber: BigInt(blockNumber),
    });
    const result = {
      type: "block",
      blockNumber,
      blockHash: block.hash,
      blockTimestamp: new Date(Number(block.timestamp) * 1000).toISOString(),
      transactions: inBlock.map((t) => t.hash),
    };
    expect(await search(String(blockNumber))).toEqual({ query: String(blockNumber), results: [result] });
    expect((await search(block.hash.toUpperCase().replace("0X", "0x"))).results).toEqual([result]);
    expect((await search(String(blockNumber + 1_000_000))).results).toEqual([]);
  });

  test("default: a tracked token's address finds the token", async () => {
    const demo = chain.config.tokens.find((t) => t.symbol === "DEMO")!;
    expect(await search(demo.address.toLowerCase())).toEqual({
      query: demo.address.toLowerCase(),
      results: [
        {
          type: "token",
          address: getAddress(demo.address),
          symbol: "DEMO",
          name: demo.name,
          decimals: demo.decimals,
          protocol: demo.protocol,
          logo: demo.logo,
        },
      ],
    });
  });

  test("default: another address finds the address, and the protocol of a configured contract", async () => {
    const router = chain.deployment.contracts.router;
    const user = chain.deployment.users[0]!;
    const count = (a: string) => expected.filter((t) => t.parties.has(a.toLowerCase())).length;
    expect((await search(router)).results).toEqual([
      { type: "address", address: getAddress(router), isContract: true, transactionCount: count(router) },
      { type: "protocol", id: "demoswap", name: "DemoSwap" },
    ]);
    expect((await search(user.toLowerCase())).results).toEqual([
      { type: "address", address: getAddress(user), isContract: false, transactionCount: count(user) },
    ]);
    expect(count(user)).toBeGreaterThan(0);
  });

  test("default: text finds tokens and protocols by prefix, case-insensitive, exact matches first", async () => {
    const token = (symbol: string) => {
      const t = chain.config.tokens.find((x) => x.symbol === symbol)!;
      return {
        type: "token",
        address: getAddress(t.address),
        symbol,
        name: t.name,
        decimals: t.decimals,
        protocol: t.protocol,
        logo: t.logo,
      };
    };
    const demoswap = { type: "protocol", id: "demoswap", name: "DemoSwap" };
    const demovault = { type: "protocol", id: "demovault", name: "DemoVault" };
    // DEMO's symbol is exact; the protocols' ids start with it; USDC's name ("Demo USD") starts with it.
    expect(await search("demo")).toEqual({
      query: "demo",
      results: [token("DEMO"), demoswap, demovault, token("USDC")],
    });
    expect((await search("  usdc ")).query).toBe("usdc");
    expect((await search("  usdc ")).results).toEqual([token("USDC")]);
    expect((await search("wrapped")).results).toEqual([token("WETH")]);
    expect((await search("DEMOVAULT")).results).toEqual([demovault]);
    expect((await search("demo usd")).results).toEqual([token("USDC")]);
    expect((await search("nothing-like-this")).results).toEqual([]);
  });

  test("args: at most 20 results", async () => {
    const extra: TokenConfig[] = Array.from({ length: 30 }, (_, i) => ({
      ...chain.config.tokens[0]!,
      address: `0x${(0xa000 + i).toString(16).padStart(40, "0")}` as Address,
      symbol: `TK${String(i).padStart(2, "0")}`,
      name: `Token ${i}`,
    }));
    const common = {
      ...pipeline.common,
      config: { ...chain.config, tokens: [...chain.config.tokens, ...extra] },
    };
    const big = await buildApp(common, { database: db.database, chain: pipeline.chain });
    try {
      const body = (await big.inject({ method: "GET", url: "/api/search?q=tk" })).json();
      expect(body.results).toHaveLength(20);
      expect(body.results.map((r: { symbol: string }) => r.symbol)).toEqual(
        extra.slice(0, 20).map((t) => t.symbol),
      );
      // An exact symbol still comes first.
      const exact = (await big.inject({ method: "GET", url: "/api/search?q=tk29" })).json();
      expect(exact.results.map((r: { symbol: string }) => r.symbol)).toEqual(["TK29"]);
    } finally {
      await big.close();
    }
  });

  test("behavior: with the node down an address result leaves isContract out", async () => {
    const deadUrl = `http://127.0.0.1:${await findFreePort()}`;
    const common = {
      ...pipeline.common,
      config: { ...chain.config, rpc: { ...chain.config.rpc, urls: [deadUrl] } },
    };
    const deadChain = createChainClient(common, { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 });
    const down = await buildApp(common, { database: db.database, chain: deadChain });
    try {
      const user = chain.deployment.users[1]!;
      const response = await down.inject({ method: "GET", url: `/api/search?q=${user}` });
      expect(response.statusCode).toBe(200);
      expect(response.json().results).toEqual([
        {
          type: "address",
          address: getAddress(user),
          transactionCount: expected.filter((t) => t.parties.has(user.toLowerCase())).length,
        },
      ]);
    } finally {
      await down.close();
      deadChain.close();
    }
  });

  test("error: an empty, blank, missing or overlong q is 400 INVALID_PARAMETER naming q", async () => {
    for (const url of [
      "/api/search?q=",
      "/api/search?q=%20%20%09",
      "/api/search",
      `/api/search?q=${"a".repeat(201)}`,
    ]) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      expect(response.headers["content-type"]).toContain("application/problem+json");
      expect(response.json()).toMatchObject({
        type: "/docs/errors#INVALID_PARAMETER",
        code: "INVALID_PARAMETER",
      });
      expect(response.json().detail, url).toMatch(/^q: /);
    }
  });
});
