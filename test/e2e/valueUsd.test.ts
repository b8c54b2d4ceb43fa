import type { FastifyInstance } from "fastify";
import { type Address, createPublicClient, formatUnits, getAddress, http, parseAbi, parseUnits } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import type { Config } from "../../src/config/schema.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { createJsonRpc } from "../../src/demo/demoClient.ts";
import { type PriceServer, startPriceServer } from "../../src/prices/_test/priceServer.ts";
import { createPriceBackfill } from "../../src/prices/createPriceBackfill.ts";
import type { HubSource } from "../../src/realtime/createHub.ts";
import { type ExpectedTransaction, readExpectedTransactions } from "../helpers/chainActivity.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { swapExact } from "../helpers/demoTxs.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { mineBlock, reorgChain } from "../helpers/reorg.ts";

const HOUR = 3600;
const DAY = 24 * HOUR;
const PAIR_ABI = parseAbi([
  "function getReserves() view returns (uint112, uint112, uint32)",
  "function token0() view returns (address)",
]);

type TransferJson = { tokenAddress: string; amount: string; decimals: number; valueUsd: number | null };
type TxJson = { txHash: string; valueUsd: number | null; tokenTransfers: TransferJson[] };
type PricePoint = { time: string; priceUsd: number | null; source: string | null };

/**
 * SPEC §10.1 and §10.2 on the demo chain with block times spread over a week, ten days in the past: every
 * transaction's and transfer's `valueUsd`, and every bucket of the price history, computed again here from
 * the chain alone (`getReserves` at the block, the config's static prices) and compared; then an api backfill
 * of older prices changes what is served, and a reorg takes the orphaned blocks' reserves with it.
 */
describe("USD at transaction time and price history (SPEC §10.1, §10.2)", () => {
  let chain: DemoChain;
  let config: Config;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let server: PriceServer;
  let app: FastifyInstance;
  let client: ReturnType<typeof createPublicClient>;
  /** the chain's time when the test starts: the genesis is ten days before the wall clock */
  const genesis = Math.floor(Date.now() / 1000 / HOUR) * HOUR - 10 * DAY;
  /** USDC's price from the api (the backfill), once it has run; the config's static 1 before */
  let usdcApi: number | null = null;

  const get = async <T>(url: string): Promise<T> => {
    const response = await app.inject({ method: "GET", url });
    expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    return response.json() as T;
  };

  beforeAll(async () => {
    chain = await setupDemoChain({ anvil: { extraArgs: ["--timestamp", String(genesis)] } });
    const rpc = createJsonRpc(chain.anvil.url);
    // Activity on six days, a few blocks each, a day and 5 hours apart.
    const latest = async () => Number((await client.getBlock({ blockTag: "latest" })).timestamp);
    client = createPublicClient({ transport: http(chain.anvil.url) });
    for (let day = 1; day <= 6; day++) {
      const at = Math.max(genesis + day * (DAY + 5 * HOUR), (await latest()) + 1);
      await rpc("evm_setNextBlockTimestamp", [at]);
      await generateTransactions({
        rpcUrl: chain.anvil.url,
        deployment: chain.deployment,
        count: 10,
        perBlock: 4,
      });
      // DEMO/USDC swaps both ways: DEMO's pool price moves from block to block.
      const d = chain.deployment;
      const sell = swapExact(d, d.users[day % 5]!, ["DEMO", "USDC"], parseUnits(`${100 * day}`, 18));
      const buy = swapExact(d, d.users[(day + 1) % 5]!, ["USDC", "DEMO"], parseUnits(`${30 * day}`, 6));
      await mineBlock(chain.anvil.url, [sell]);
      await mineBlock(chain.anvil.url, [buy]);
    }
    server = await startPriceServer();
    config = {
      ...chain.config,
      prices: { cacheSeconds: 300, api: { kind: "defillama", baseUrl: server.url } },
    };
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config, database: db.database });
    await pipeline.catchUp();
    // Caches on, emptied only by the change notices (no ingest events here): a stale value would show.
    const quiet: HubSource = { subscribe: () => () => undefined };
    app = await buildApp(pipeline.common, {
      database: db.database,
      chain: pipeline.chain,
      indexerStatus: pipeline.indexer.status,
      events: quiet,
    });
  }, 300_000);

  afterAll(async () => {
    await app?.close();
    await pipeline?.close();
    await server?.close();
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  /** SPEC §6 at a block, from the chain: pools by `getReserves` at that block x USDC's price; RWD none. */
  async function pricesAtBlock(block: number): Promise<Map<string, number | null>> {
    const t = chain.deployment.tokens;
    const c = chain.deployment.contracts;
    const usdc = usdcApi ?? 1;
    const fromPool = async (pair: Address, token: string) => {
      const code = await client.getCode({ address: pair, blockNumber: BigInt(block) });
      if (code === undefined || code === "0x") return null; // not deployed yet
      const [[r0, r1], token0] = await Promise.all([
        client.readContract({
          address: pair,
          abi: PAIR_ABI,
          functionName: "getReserves",
          blockNumber: BigInt(block),
        }),
        client.readContract({
          address: pair,
          abi: PAIR_ABI,
          functionName: "token0",
          blockNumber: BigInt(block),
        }),
      ]);
      const [mine, quote] = token0.toLowerCase() === token ? [r0, r1] : [r1, r0];
      if (quote < parseUnits("1000", 6) || mine === 0n) return null; // minQuoteLiquidity of the demo config
      return (Number(formatUnits(quote, 6)) / Number(formatUnits(mine, 18))) * usdc;
    };
    const demo = t.DEMO.address.toLowerCase();
    const weth = t.WETH.address.toLowerCase();
    return new Map([
      [t.USDC.address.toLowerCase(), usdc],
      [demo, await fromPool(c.pairDemoUsdc, demo)],
      [weth, await fromPool(c.pairWethUsdc, weth)],
      [t.RWD.address.toLowerCase(), null],
    ]);
  }

  const close = (actual: number | null, expected: number | null, what: string, relative = 1e-12) => {
    if (expected === null) return expect(actual, what).toBeNull();
    expect(actual, what).not.toBeNull();
    expect(Math.abs(actual! - expected), what).toBeLessThanOrEqual(Math.abs(expected) * relative);
  };

  /** Every stored transaction's values against the chain; returns how many transfers were priced. */
  async function expectValuesMatchChain(): Promise<number> {
    const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
    const txs = await readExpectedTransactions(chain.anvil.url, config, chain.deployment.startBlock, head);
    const decimals = new Map(config.tokens.map((t) => [t.address as string, t.decimals]));
    const byBlock = new Map<number, Map<string, number | null>>();
    let priced = 0;
    for (const tx of txs) {
      if (!byBlock.has(tx.blockNumber)) byBlock.set(tx.blockNumber, await pricesAtBlock(tx.blockNumber));
      const prices = byBlock.get(tx.blockNumber)!;
      const body = await get<TxJson>(`/api/tx/${tx.hash}`);
      expect(body.tokenTransfers).toHaveLength(tx.transfers.length);
      const values = tx.transfers.map((t) => {
        const price = prices.get(t.token) ?? null;
        return price === null ? null : Number(formatUnits(t.amount, decimals.get(t.token)!)) * price;
      });
      body.tokenTransfers.forEach((t, i) => {
        close(t.valueUsd, values[i]!, `${tx.hash} transfer ${i}`);
      });
      priced += values.filter((v) => v !== null).length;
      close(body.valueUsd, expectedTransactionValue(tx, values), `${tx.hash} valueUsd`);
    }
    return priced;
  }

  /** SPEC §7's per-transaction rule, written again from the spec. */
  function expectedTransactionValue(tx: ExpectedTransaction, values: (number | null)[]): number | null {
    if (values.every((v) => v === null)) return null;
    const protocol = config.protocols.find((p) => p.id === tx.protocol)!;
    const own = new Set<string>([...protocol.contracts.map((c) => c.address), ...protocol.tvlAddresses]);
    let into = 0;
    let out = 0;
    let flow = false;
    tx.transfers.forEach((t, i) => {
      if (own.has(t.to)) {
        into += values[i] ?? 0;
        flow = true;
      }
      if (own.has(t.from)) {
        out += values[i] ?? 0;
        flow = true;
      }
    });
    return flow ? Math.max(into, out) : Math.max(...values.map((v) => v ?? 0));
  }

  /** Every block's time (seconds), by number, read once per call. */
  async function blockTimes(): Promise<number[]> {
    const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
    const numbers = Array.from({ length: head + 1 }, (_, n) => n);
    const blocks = await Promise.all(numbers.map((n) => client.getBlock({ blockNumber: BigInt(n) })));
    return blocks.map((b) => Number(b.timestamp));
  }

  /** The chain's last block at or before `time` (seconds), or null before the first. */
  function blockAt(times: readonly number[], time: number): number | null {
    for (let n = times.length - 1; n >= 0; n--) if (times[n]! <= time) return n;
    return null;
  }

  test("default: valueUsd of every transaction and transfer is amount x price at block time", async () => {
    const days = new Set((await blockTimes()).map((t) => Math.floor(t / DAY)));
    expect(days.size).toBeGreaterThanOrEqual(6); // block times spread over days
    expect(await expectValuesMatchChain()).toBeGreaterThan(50);
  });

  test("default: price history per day and per hour is the price at each bucket's end", async () => {
    const demo = chain.deployment.tokens.DEMO.address;
    const from = genesis - DAY;
    const to = genesis + 7 * DAY;
    const days = await get<{ token: string; interval: string; points: PricePoint[] }>(
      `/api/tokens/${demo.toLowerCase()}/price-history?interval=day&from=${from}&to=${new Date(to * 1000).toISOString()}`,
    );
    expect(days.token).toBe(getAddress(demo));
    expect(days.interval).toBe("day");
    expect(days.points.map((p) => p.time)).toEqual(
      Array.from({ length: 9 }, (_, i) => new Date((Math.floor(from / DAY) + i) * DAY * 1000).toISOString()),
    );
    let priced = 0;
    const times = await blockTimes();
    for (const point of days.points) {
      const block = blockAt(times, Date.parse(point.time) / 1000 + DAY - 1);
      const want = block === null ? null : ((await pricesAtBlock(block)).get(demo.toLowerCase()) ?? null);
      close(point.priceUsd, want, `day ${point.time}`);
      expect(point.source).toBe(want === null ? null : "dex");
      if (want !== null) priced++;
    }
    expect(priced).toBeGreaterThanOrEqual(6);
    // Hourly around the third day's activity: the price changes within the day.
    const start = genesis + 3 * (DAY + 5 * HOUR) - 2 * HOUR;
    const hours = await get<{ points: PricePoint[] }>(
      `/api/tokens/${demo}/price-history?interval=hour&from=${start}&to=${start + 5 * HOUR}`,
    );
    expect(hours.points).toHaveLength(6);
    for (const point of hours.points) {
      const block = blockAt(times, Date.parse(point.time) / 1000 + HOUR - 1);
      close(
        point.priceUsd,
        (await pricesAtBlock(block!)).get(demo.toLowerCase()) ?? null,
        `hour ${point.time}`,
      );
    }
    expect(new Set(hours.points.map((p) => p.priceUsd)).size).toBeGreaterThan(1);
    // USDC is static at every time, before the indexed range too.
    const usdc = await get<{ points: PricePoint[] }>(
      `/api/tokens/${chain.deployment.tokens.USDC.address}/price-history?interval=day&from=${from}&to=${to}`,
    );
    expect(usdc.points.every((p) => p.priceUsd === 1 && p.source === "static")).toBe(true);
  });

  test("error: bad parameters and untracked tokens", async () => {
    const demo = chain.deployment.tokens.DEMO.address;
    for (const query of [
      "interval=week",
      "from=2026-11-02&to=2026-11-01",
      "interval=hour&from=0&to=3600000",
      "to=soon",
    ]) {
      const response = await app.inject({ method: "GET", url: `/api/tokens/${demo}/price-history?${query}` });
      expect(response.statusCode, query).toBe(400);
      expect(response.json().code, query).toBe("INVALID_PARAMETER");
    }
    const untracked = await app.inject({
      method: "GET",
      url: `/api/tokens/0x${"12".repeat(20)}/price-history`,
    });
    expect(untracked.statusCode).toBe(404);
    expect(untracked.json().code).toBe("TOKEN_NOT_TRACKED");
  });

  test("behavior: an api backfill of older prices changes the values served", async () => {
    const swap = (
      await readExpectedTransactions(
        chain.anvil.url,
        config,
        chain.deployment.startBlock,
        Number(await client.getBlockNumber({ cacheTime: 0 })),
      )
    ).find(
      (t) =>
        t.protocol === "demoswap" &&
        t.transfers.some((x) => x.token === chain.deployment.tokens.USDC.address.toLowerCase()),
    )!;
    const before = await get<TxJson>(`/api/tx/${swap.hash}`);
    // USDC at 0.98 every hour of the indexed range, from the stand-in's chart endpoint.
    server.history.set(chain.deployment.tokens.USDC.address.toLowerCase(), () => 0.98);
    const backfill = createPriceBackfill(pipeline.common, { db: db.database.db, minIntervalMs: 0 })!;
    while (await backfill.step());
    expect(server.requests.some((r) => r.path.startsWith("/chart/"))).toBe(true);
    usdcApi = 0.98;
    // The change notice empties the caches: the next read is the new value (PGlite notifies asynchronously).
    let after = await get<TxJson>(`/api/tx/${swap.hash}`);
    for (let i = 0; i < 50 && after.valueUsd === before.valueUsd; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await get<TxJson>(`/api/tx/${swap.hash}`);
    }
    close(after.valueUsd, before.valueUsd! * 0.98, "swap valued with the api's USDC price", 1e-9);
    expect(await expectValuesMatchChain()).toBeGreaterThan(50);
    const usdc = await get<{ points: PricePoint[] }>(
      `/api/tokens/${chain.deployment.tokens.USDC.address}/price-history?interval=day&from=${genesis + DAY}&to=${genesis + 5 * DAY}`,
    );
    expect(usdc.points.every((p) => p.priceUsd === 0.98 && p.source === "api")).toBe(true);
  });

  test("behavior: a reorg takes the orphaned blocks' reserves with it", async () => {
    const d = chain.deployment;
    const demo = d.tokens.DEMO.address.toLowerCase();
    const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
    const headTime = Number((await client.getBlock({ blockNumber: BigInt(head) })).timestamp);
    const hourOf = Math.floor(headTime / HOUR) * HOUR;
    const url = `/api/tokens/${demo}/price-history?interval=hour&from=${hourOf}&to=${hourOf}`;
    const before = (await get<{ points: PricePoint[] }>(url)).points[0]!;
    // The last block replaced by one holding a DEMO sale: DEMO's price at that time is the new block's.
    await reorgChain(chain.anvil.url, 1, [
      { tx: { request: swapExact(d, d.users[1]!, ["DEMO", "USDC"], parseUnits("500", 18)) }, blockOffset: 0 },
    ]);
    await pipeline.catchUp();
    const after = (await get<{ points: PricePoint[] }>(url)).points[0]!;
    const want = (await pricesAtBlock(head)).get(demo) ?? null;
    close(after.priceUsd, want, "DEMO after the reorg");
    expect(after.priceUsd).not.toBe(before.priceUsd);
    expect(await expectValuesMatchChain()).toBeGreaterThan(50);
  });
});
