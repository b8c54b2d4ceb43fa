import type { FastifyInstance } from "fastify";
import { type Address, createPublicClient, erc20Abi, formatUnits, http, parseAbi } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import type { Config } from "../../src/config/schema.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { createDemoClient } from "../../src/demo/demoClient.ts";
import { createPriceEngine } from "../../src/prices/createPriceEngine.ts";
import { createUsdStats } from "../../src/stats/createUsdStats.ts";
import { type ExpectedTransaction, readExpectedTransactions } from "../helpers/chainActivity.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

const DAY_MS = 24 * 3600 * 1000;
const PAIR_ABI = parseAbi([
  "function getReserves() view returns (uint112, uint112, uint32)",
  "function token0() view returns (address)",
]);

type Figures = { tvl: number; dailyVolume: number; uniqueUsers: number; transactionCount: number };

/**
 * SPEC §7 on the demo chain: every USD figure the API serves is computed again here from the chain alone
 * (reserves, balanceOf, receipts), without protoscan's code, and compared.
 */
describe("USD statistics: tvl, dailyVolume, last24h (SPEC §7)", () => {
  let chain: DemoChain;
  let config: Config;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let app: FastifyInstance;
  let client: ReturnType<typeof createPublicClient>;
  const get = async <T>(url: string): Promise<T> => {
    const response = await app.inject({ method: "GET", url });
    expect(response.statusCode, url).toBe(200);
    return response.json() as T;
  };

  beforeAll(async () => {
    chain = await setupDemoChain();
    // Prices move with every swap: no cache, so the API and this test read the pools in the same state.
    config = { ...chain.config, prices: { cacheSeconds: 0 } };
    await generateTransactions({
      rpcUrl: chain.anvil.url,
      deployment: chain.deployment,
      count: 30,
      perBlock: 3,
    });
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config, database: db.database });
    await pipeline.catchUp();
    const prices = createPriceEngine(pipeline.common, { chain: pipeline.chain, db: db.database.db });
    app = await buildApp(pipeline.common, {
      database: db.database,
      chain: pipeline.chain,
      indexerStatus: pipeline.indexer.status,
      prices,
      usdStats: createUsdStats(pipeline.common, { db: db.database.db, prices, maxAgeMs: 0 }),
    });
    client = createPublicClient({ transport: http(chain.anvil.url) });
  }, 300_000);

  afterAll(async () => {
    await app?.close();
    await pipeline?.close();
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  /** SPEC §6 from the chain: USDC static 1, DEMO and WETH from their USDC pools (deep enough), RWD none. */
  async function chainPrices(): Promise<Map<string, number>> {
    const t = chain.deployment.tokens;
    const c = chain.deployment.contracts;
    const fromPool = async (pair: Address, token: string) => {
      const [[r0, r1], token0] = await Promise.all([
        client.readContract({ address: pair, abi: PAIR_ABI, functionName: "getReserves" }),
        client.readContract({ address: pair, abi: PAIR_ABI, functionName: "token0" }),
      ]);
      const [mine, usdc] = token0.toLowerCase() === token ? [r0, r1] : [r1, r0];
      expect(usdc).toBeGreaterThan(1000n * 10n ** 6n);
      return Number(formatUnits(usdc, 6)) / Number(formatUnits(mine, 18));
    };
    const demo = t.DEMO.address.toLowerCase();
    const weth = t.WETH.address.toLowerCase();
    return new Map([
      [t.USDC.address.toLowerCase(), 1],
      [demo, await fromPool(c.pairDemoUsdc, demo)],
      [weth, await fromPool(c.pairWethUsdc, weth)],
    ]);
  }

  /** The tvl addresses' on-chain balances of every tracked token x price. */
  async function chainTvl(protocolId: string, prices: Map<string, number>): Promise<number> {
    const protocol = config.protocols.find((p) => p.id === protocolId)!;
    let usd = 0;
    for (const holder of protocol.tvlAddresses) {
      for (const token of config.tokens) {
        const balance = await client.readContract({
          address: token.address,
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [holder],
        });
        usd += Number(formatUnits(balance, token.decimals)) * (prices.get(token.address) ?? 0);
      }
    }
    return usd;
  }

  /** SPEC §7 dailyVolume over the chain's transactions of the protocol in [since, …). */
  function chainVolume(
    txs: ExpectedTransaction[],
    protocolId: string,
    since: number,
    prices: Map<string, number>,
  ): number {
    const protocol = config.protocols.find((p) => p.id === protocolId)!;
    const own = new Set([...protocol.contracts.map((c) => c.address), ...protocol.tvlAddresses]);
    const decimals = new Map(config.tokens.map((t) => [t.address as string, t.decimals]));
    const usdOf = (t: ExpectedTransaction["transfers"][number]) =>
      Number(formatUnits(t.amount, decimals.get(t.token)!)) * (prices.get(t.token) ?? 0);
    let volume = 0;
    for (const tx of txs.filter((x) => x.protocol === protocolId && x.timestamp >= since)) {
      const into = tx.transfers.filter((t) => own.has(t.to as Address));
      const outOf = tx.transfers.filter((t) => own.has(t.from as Address));
      const sum = (list: typeof tx.transfers) => list.reduce((s, t) => s + usdOf(t), 0);
      if (into.length > 0 || outOf.length > 0) volume += Math.max(sum(into), sum(outOf));
      else volume += Math.max(0, ...tx.transfers.map(usdOf));
    }
    return volume;
  }

  /** What every endpoint must say, computed from the chain. */
  async function expectedFigures() {
    const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
    const txs = await readExpectedTransactions(chain.anvil.url, config, chain.deployment.startBlock, head);
    const headTime = Number((await client.getBlock({ blockNumber: BigInt(head) })).timestamp) * 1000;
    const since = Math.max(Date.now(), headTime) - DAY_MS;
    const prices = await chainPrices();
    const protocols = new Map<string, Figures>();
    for (const p of config.protocols) {
      const mine = txs.filter((t) => t.protocol === p.id);
      protocols.set(p.id, {
        tvl: await chainTvl(p.id, prices),
        dailyVolume: chainVolume(txs, p.id, since, prices),
        uniqueUsers: new Set(mine.map((t) => t.from)).size,
        transactionCount: mine.length,
      });
    }
    const inWindow = txs.filter((t) => t.timestamp >= since);
    return { txs, prices, protocols, since, last24hTransactions: inWindow.length };
  }

  const close = (actual: number, expected: number) =>
    expect(Math.abs(actual - expected)).toBeLessThanOrEqual(Math.max(1e-9, Math.abs(expected) * 1e-9));

  async function expectApiMatches(want: Awaited<ReturnType<typeof expectedFigures>>) {
    const overview = await get<{ protocols: (Figures & { id: string })[] }>("/api/overview");
    for (const p of config.protocols) {
      const figures = want.protocols.get(p.id)!;
      const stats = await get<Figures & { protocol: string }>(`/api/protocol/${p.id}/stats`);
      const listed = overview.protocols.find((x) => x.id === p.id)!;
      for (const body of [stats, listed]) {
        expect(body.uniqueUsers).toBe(figures.uniqueUsers);
        expect(body.transactionCount).toBe(figures.transactionCount);
        close(body.tvl, figures.tvl);
        close(body.dailyVolume, figures.dailyVolume);
      }
    }
    const stats = await get<{ last24h: { transactions: number; volumeUsd: number } }>("/api/stats");
    expect(stats.last24h.transactions).toBe(want.last24hTransactions);
    close(
      stats.last24h.volumeUsd,
      [...want.protocols.values()].reduce((s, p) => s + p.dailyVolume, 0),
    );
  }

  test("default: tvl, dailyVolume, uniqueUsers and transactionCount equal the chain's", async () => {
    const want = await expectedFigures();
    // Every branch of the volume rule occurs: swaps (into and out of the pairs), vault deposits (into the
    // vault), and plain token transfers (neither: their largest transfer counts).
    expect(want.protocols.get("demoswap")!.tvl).toBeGreaterThan(4_000_000);
    expect(want.protocols.get("demovault")!.tvl).toBeGreaterThan(0);
    expect(want.protocols.get("demoswap")!.dailyVolume).toBeGreaterThan(0);
    expect(want.protocols.get("demovault")!.dailyVolume).toBeGreaterThan(0);
    await expectApiMatches(want);
  });

  test("default: token detail shows the engine's price with its tier and time", async () => {
    const prices = await chainPrices();
    for (const token of config.tokens) {
      const body = await get<{
        priceUsd: number | null;
        priceSource: string | null;
        priceUpdatedAt: string | null;
      }>(`/api/tokens/${token.address}`);
      const want = prices.get(token.address);
      if (want === undefined) {
        expect(body).toMatchObject({ priceUsd: null, priceSource: null, priceUpdatedAt: null });
        continue;
      }
      close(body.priceUsd!, want);
      expect(body.priceSource).toBe(token.symbol === "USDC" ? "static" : "dex");
      expect(Date.now() - Date.parse(body.priceUpdatedAt!)).toBeLessThan(60_000);
    }
  });

  test("behavior: transactions older than 24 h (chain time) drop out of the volume", async () => {
    const before = await expectedFigures();
    const oldHashes = new Set(before.txs.map((t) => t.hash));
    const demo = createDemoClient(chain.anvil.url);
    await demo.rpc("evm_increaseTime", [25 * 3600]);
    await demo.rpc("evm_mine", []);
    await generateTransactions({
      rpcUrl: chain.anvil.url,
      deployment: chain.deployment,
      count: 10,
      perBlock: 2,
    });
    await pipeline.catchUp();
    const after = await expectedFigures();
    const fresh = after.txs.filter((t) => !oldHashes.has(t.hash));
    expect(fresh.length).toBeGreaterThan(0);
    // Only the new transactions are in the window now; the old ones still count for users and transactions.
    expect(after.last24hTransactions).toBe(fresh.length);
    expect(after.protocols.get("demoswap")!.transactionCount).toBeGreaterThan(
      before.protocols.get("demoswap")!.transactionCount,
    );
    await expectApiMatches(after);
    const recomputedOld = chainVolume(before.txs, "demoswap", after.since, after.prices);
    expect(recomputedOld).toBe(0);
  });
});
