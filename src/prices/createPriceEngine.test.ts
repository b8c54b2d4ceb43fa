import { sql } from "drizzle-orm";
import { createPublicClient, formatUnits, http, parseAbi } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../../test/helpers/demo.ts";
import { testCommon } from "../chain/_test/testCommon.ts";
import { type ChainClient, createChainClient } from "../chain/createChainClient.ts";
import type { Config, TokenConfig } from "../config/schema.ts";
import { createLogger, type Logger } from "../internal/logger.ts";
import { getStoredPrices } from "../store/priceStore.ts";
import { type PriceServer, startPriceServer } from "./_test/priceServer.ts";
import { createPriceEngine, type PriceEngine } from "./createPriceEngine.ts";

const KEY = "alcht_SECRETkey0123456789abcdef";
const START = new Date("2026-11-21T08:00:00.000Z");
const CACHE_SECONDS = 300;

let chain: DemoChain;
let db: TestDatabase;
let server: PriceServer;
let rpc: ChainClient;
let DEMO: string;
let USDC: string;
let WETH: string;
let RWD: string;
/** DEMO's price in USDC and WETH's, from the demo pools' reserves as the chain reports them */
let demoPerUsdc: number;
let wethPerUsdc: number;
let clock: Date;

beforeAll(async () => {
  chain = await setupDemoChain();
  db = await createTestDatabase();
  server = await startPriceServer({ apiKey: KEY });
  rpc = createChainClient(testCommon(chain.config));
  const t = chain.deployment.tokens;
  [DEMO, USDC, WETH, RWD] = [t.DEMO, t.USDC, t.WETH, t.RWD].map((x) => x.address.toLowerCase()) as [
    string,
    string,
    string,
    string,
  ];
  const client = createPublicClient({ transport: http(chain.anvil.url) });
  const ratio = async (pair: `0x${string}`, token: string, decimals: number) => {
    const abi = parseAbi([
      "function getReserves() view returns (uint112, uint112, uint32)",
      "function token0() view returns (address)",
    ]);
    const [[r0, r1], token0] = await Promise.all([
      client.readContract({ address: pair, abi, functionName: "getReserves" }),
      client.readContract({ address: pair, abi, functionName: "token0" }),
    ]);
    const [mine, usdc] = token0.toLowerCase() === token ? [r0, r1] : [r1, r0];
    return Number(formatUnits(usdc, 6)) / Number(formatUnits(mine, decimals));
  };
  demoPerUsdc = await ratio(chain.deployment.contracts.pairDemoUsdc, DEMO, 18);
  wethPerUsdc = await ratio(chain.deployment.contracts.pairWethUsdc, WETH, 18);
}, 300_000);

afterAll(async () => {
  rpc?.close();
  await server?.close();
  await db?.cleanup();
  await chain?.anvil.stop();
});

beforeEach(async () => {
  clock = START;
  server.quotes.clear();
  server.requests.length = 0;
  server.down = false;
  await db.database.db.execute(sql`delete from prices`);
});

type Options = {
  api?: boolean;
  tokens?: (tokens: TokenConfig[]) => TokenConfig[];
  logger?: Logger;
};

function configOf(options: Options): Config {
  const api = { kind: "alchemy" as const, apiKey: KEY, network: "eth-mainnet", baseUrl: server.url };
  return {
    ...chain.config,
    prices: { cacheSeconds: CACHE_SECONDS, ...(options.api === false ? {} : { api }) },
    tokens: options.tokens ? options.tokens(chain.config.tokens) : chain.config.tokens,
  };
}

function engineOf(options: Options = {}): PriceEngine {
  return createPriceEngine(testCommon(configOf(options), options.logger), {
    chain: rpc,
    db: db.database.db,
    now: () => clock,
  });
}

const requested = () => server.requests.flatMap((r) => r.tokens);
const minutesAgo = (m: number) => new Date(clock.getTime() - m * 60_000);

describe("tiers", () => {
  test("default: the API prices every token it knows, with its own time", async () => {
    server.set(DEMO, { usd: 0.51, at: minutesAgo(2) });
    server.set(USDC, { usd: 0.9999, at: minutesAgo(1) });
    server.set(WETH, { usd: 3010, at: minutesAgo(3) });
    const prices = await engineOf().pricesOf([DEMO, USDC, WETH, RWD]);
    expect(prices).toEqual(
      new Map([
        [DEMO, { usd: 0.51, source: "api", at: minutesAgo(2) }],
        [USDC, { usd: 0.9999, source: "api", at: minutesAgo(1) }],
        [WETH, { usd: 3010, source: "api", at: minutesAgo(3) }],
        [RWD, null],
      ]),
    );
    // One call for the four; each tier's result is stored with its tier and time.
    expect(server.requests).toHaveLength(1);
    const rows = await getStoredPrices(db.database.db, [DEMO, USDC, WETH, RWD]);
    expect(rows.map((r) => [r.tokenAddress, r.priceUsd, r.source, r.priceAt, r.fetchedAt]).sort()).toEqual(
      [
        [DEMO, 0.51, "api", minutesAgo(2), clock],
        [USDC, 0.9999, "api", minutesAgo(1), clock],
        [WETH, 3010, "api", minutesAgo(3), clock],
      ].sort(),
    );
  });

  test("behavior: a token the API errors on falls to its pool, priced with the API's quote price", async () => {
    server.set(DEMO, { usd: 0.51, at: clock, error: "Token not found" });
    server.set(USDC, { usd: 0.998, at: clock });
    const engine = engineOf();
    expect(await engine.priceOf(DEMO)).toEqual({ usd: demoPerUsdc * 0.998, source: "dex", at: clock });
    expect(await engine.priceOf(USDC)).toEqual({ usd: 0.998, source: "api", at: clock });
    expect(demoPerUsdc).toBeCloseTo(0.5, 6);
  });

  test("behavior: with the API down, pools and static prices answer", async () => {
    server.down = true;
    const prices = await engineOf().pricesOf([DEMO, WETH, USDC]);
    expect(prices.get(USDC)).toEqual({ usd: 1, source: "static", at: clock });
    expect(prices.get(DEMO)).toEqual({ usd: demoPerUsdc, source: "dex", at: clock });
    expect(prices.get(WETH)).toEqual({ usd: wethPerUsdc, source: "dex", at: clock });
    expect(wethPerUsdc).toBeCloseTo(3000, 6);
    const rows = await getStoredPrices(db.database.db, [DEMO, WETH, USDC]);
    expect(new Map(rows.map((r) => [r.tokenAddress, r.source]))).toEqual(
      new Map([
        [DEMO, "dex"],
        [WETH, "dex"],
        [USDC, "static"],
      ]),
    );
  });

  test("behavior: a pool thinner than minQuoteLiquidity is refused for the static price", async () => {
    const engine = engineOf({
      api: false,
      tokens: (tokens) =>
        tokens.map((t) =>
          t.address === DEMO ? { ...t, price: { ...t.price, minQuoteLiquidity: "1000001", usd: 0.42 } } : t,
        ),
    });
    // The DEMO/USDC pool holds 1,000,000 USDC: one more is required.
    expect(await engine.priceOf(DEMO)).toEqual({ usd: 0.42, source: "static", at: clock });
  });

  test("behavior: a token no tier prices is null, and so is an untracked one", async () => {
    server.set(USDC, { usd: 1, at: clock });
    const engine = engineOf();
    expect(await engine.priceOf(RWD)).toBeNull();
    expect(await engine.priceOf("0x000000000000000000000000000000000000dEaD")).toBeNull();
    expect(await engineOf({ api: false }).priceOf(RWD)).toBeNull();
  });

  test("behavior: an API price older than 1 hour is refused for the next tier", async () => {
    server.set(DEMO, { usd: 0.7, at: minutesAgo(61) });
    server.set(USDC, { usd: 1.001, at: minutesAgo(59) });
    const engine = engineOf();
    expect(await engine.priceOf(DEMO)).toEqual({ usd: demoPerUsdc * 1.001, source: "dex", at: clock });
  });

  test("behavior: pools quoted in each other resolve without a deadlock", async () => {
    server.down = true;
    const pool = chain.deployment.contracts.pairDemoUsdc.toLowerCase() as `0x${string}`;
    const circular = (usdcStatic?: number) =>
      engineOf({
        tokens: (tokens) =>
          tokens.map((t) => {
            if (t.address === DEMO) return { ...t, price: { pool, quote: USDC as `0x${string}` } };
            if (t.address === USDC) {
              const price = { pool, quote: DEMO as `0x${string}` };
              return { ...t, price: usdcStatic === undefined ? price : { ...price, usd: usdcStatic } };
            }
            return t;
          }),
      });
    expect(await circular().pricesOf([DEMO, USDC])).toEqual(
      new Map([
        [DEMO, null],
        [USDC, null],
      ]),
    );
    // With a static USDC price: whichever lookup would close the cycle gets no dex price. USDC always ends
    // static (its pool needs DEMO, which needs USDC); DEMO is priced from its pool unless it was the one.
    const prices = await circular(1).pricesOf([DEMO, USDC]);
    expect(prices.get(USDC)).toEqual({ usd: 1, source: "static", at: clock });
    expect([null, demoPerUsdc]).toContain(prices.get(DEMO)?.usd ?? null);
    // Looked up alone, DEMO's quote is found in the cache: no cycle at all.
    const engine = circular(1);
    await engine.priceOf(USDC);
    clock = new Date(clock.getTime() + 1);
    expect(await engineOf({ api: false }).priceOf(DEMO)).toMatchObject({ usd: demoPerUsdc, source: "dex" });
  });
});

describe("cache", () => {
  test("default: at most one upstream request per token per cacheSeconds", async () => {
    server.set(WETH, { usd: 3000, at: clock });
    const engine = engineOf();
    // Concurrent lookups share one in flight; later ones read the cache.
    const first = await Promise.all([engine.priceOf(WETH), engine.priceOf(WETH), engine.priceOf(WETH)]);
    expect(first.map((p) => p?.usd)).toEqual([3000, 3000, 3000]);
    expect(requested()).toEqual([WETH]);
    clock = new Date(START.getTime() + (CACHE_SECONDS * 1000 - 1));
    const later = clock;
    server.set(WETH, { usd: 3100, at: later });
    expect((await engine.priceOf(WETH))?.usd).toBe(3000);
    expect(requested()).toEqual([WETH]);
    clock = new Date(START.getTime() + CACHE_SECONDS * 1000);
    expect(await engine.priceOf(WETH)).toEqual({ usd: 3100, source: "api", at: later });
    expect(requested()).toEqual([WETH, WETH]);
  });

  test("behavior: a miss is cached too, for the same time", async () => {
    const engine = engineOf();
    expect(await engine.priceOf(RWD)).toBeNull();
    expect(await engine.priceOf(RWD)).toBeNull();
    expect(requested()).toEqual([RWD]);
  });

  test("behavior: another replica on the same database reads the stored price instead of asking", async () => {
    server.set(WETH, { usd: 3000, at: clock });
    await engineOf().priceOf(WETH);
    const replica = engineOf();
    expect(await replica.priceOf(WETH)).toEqual({ usd: 3000, source: "api", at: clock });
    expect(requested()).toEqual([WETH]);
    clock = new Date(START.getTime() + CACHE_SECONDS * 1000);
    await replica.priceOf(WETH);
    expect(requested()).toEqual([WETH, WETH]);
  });

  test("behavior: refreshAll looks every tracked token up again, in one call", async () => {
    for (const t of [DEMO, USDC, WETH]) server.set(t, { usd: 2, at: clock });
    const engine = engineOf();
    await engine.pricesOf([DEMO, USDC, WETH, RWD]);
    const refreshed = await engine.refreshAll();
    expect([...refreshed.keys()].sort()).toEqual([DEMO, USDC, WETH, RWD].sort());
    expect(server.requests.map((r) => [...r.tokens].sort())).toEqual([
      [DEMO, USDC, WETH, RWD].sort(),
      [DEMO, USDC, WETH, RWD].sort(),
    ]);
  });

  test("behavior: 30 misses in one tick are 2 Alchemy calls", async () => {
    const tokens = Array.from({ length: 30 }, (_, i) => `0x${(0xabc000 + i).toString(16).padStart(40, "0")}`);
    for (const t of tokens) server.set(t, { usd: 1 + tokens.indexOf(t), at: clock });
    const engine = engineOf();
    const prices = await Promise.all(tokens.map((t) => engine.priceOf(t)));
    expect(prices.map((p) => p?.usd)).toEqual(tokens.map((_, i) => 1 + i));
    expect(server.requests.map((r) => r.tokens.length).sort((a, b) => a - b)).toEqual([5, 25]);
  });
});

test("behavior: a failing API is logged without its key, and the request still answers", async () => {
  server.down = true;
  const lines: string[] = [];
  const logger = createLogger({ level: "debug", destination: { write: (line: string) => lines.push(line) } });
  const engine = engineOf({ logger });
  expect((await engine.priceOf(USDC))?.source).toBe("static");
  const downed = createPriceEngine(
    testCommon(
      {
        ...configOf({}),
        prices: {
          cacheSeconds: 300,
          api: { kind: "alchemy", apiKey: KEY, network: "x", baseUrl: "http://127.0.0.1:1" },
        },
      },
      logger,
    ),
    { chain: rpc, db: db.database.db, now: () => clock },
  );
  expect((await downed.priceOf(DEMO))?.source).toBe("dex");
  const log = lines.join("");
  expect(log).toContain("price API call failed");
  expect(log).toContain("HTTP 500");
  expect(log).toContain("unreachable");
  expect(log).not.toContain(KEY);
});

describe("price history points", () => {
  const points = async () =>
    (
      await db.database.db.execute<{ source: string; time: string | Date; price_usd: number }>(
        sql`select source, time, price_usd from price_history where token_address = ${DEMO} order by time`,
      )
    ).rows.map((r) => [r.source, new Date(r.time).toISOString(), Number(r.price_usd)]);
  /** A bucket's revision: a statement writing price_history at or before its hour gives it a new one. */
  const revision = async () =>
    Number(
      (
        await db.database.db.execute<{ revision: string }>(
          sql`select revision from history_buckets where span = 'hour' and protocol = 'price-test'`,
        )
      ).rows[0]?.revision,
    );

  beforeEach(async () => {
    await db.database.db.execute(sql`delete from price_history`);
    await db.database.db.execute(sql`delete from history_buckets where protocol = 'price-test'`);
    await db.database.db.execute(
      sql`insert into history_buckets (span, protocol, bucket, revision) values ('hour', 'price-test', ${START.toISOString()}::timestamptz, 0)`,
    );
  });

  test("behavior: a refresh with an unchanged price writes no point and invalidates nothing; a changed one writes one", async () => {
    const engine = engineOf();
    server.set(DEMO, { usd: 0.51, at: clock });
    await engine.refreshAll();
    expect(await points()).toEqual([["api", START.toISOString(), 0.51]]);
    const before = await revision();
    // The next refreshes: the provider states the same price at a newer time.
    for (let i = 1; i <= 3; i++) {
      clock = new Date(START.getTime() + i * CACHE_SECONDS * 1000);
      server.set(DEMO, { usd: 0.51, at: clock });
      await engine.refreshAll();
    }
    expect(await points()).toEqual([["api", START.toISOString(), 0.51]]);
    expect(await revision()).toBe(before);
    // A changed price is a point, and moves the volumes after it.
    clock = new Date(START.getTime() + 4 * CACHE_SECONDS * 1000);
    server.set(DEMO, { usd: 0.52, at: clock });
    await engine.refreshAll();
    expect(await points()).toEqual([
      ["api", START.toISOString(), 0.51],
      ["api", clock.toISOString(), 0.52],
    ]);
    expect(await revision()).not.toBe(before);
  });

  test("behavior: an unchanged api price is recorded again once its latest point is half an hour old", async () => {
    const engine = engineOf();
    server.set(DEMO, { usd: 0.51, at: clock });
    await engine.refreshAll();
    // Refreshes every 5 minutes: the point of minute 30 is written, so the api price answers for every
    // time up to an hour after the last refresh but for at most the last half hour (docs/prices.md).
    for (let i = 1; i <= 7; i++) {
      clock = new Date(START.getTime() + i * CACHE_SECONDS * 1000);
      server.set(DEMO, { usd: 0.51, at: clock });
      await engine.refreshAll();
    }
    const halfHour = new Date(START.getTime() + 30 * 60_000).toISOString();
    expect(await points()).toEqual([
      ["api", START.toISOString(), 0.51],
      ["api", halfHour, 0.51],
    ]);
  });
});
