import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import type { Address, Config } from "../config/schema.ts";
import type { PriceEngine } from "../prices/createPriceEngine.ts";
import type { Price } from "../prices/price.ts";
import { createUsdStats } from "./createUsdStats.ts";

const addr = (i: number) => `0x${i.toString(16).padStart(40, "0")}` as Address;
const [USDC, PAIR, USER] = [addr(1), addr(2), addr(3)];
/** The real clock: the database keeps volume rows for transactions of the last 25 hours of its own clock. */
const START = new Date();
const HOUR = 3600 * 1000;

const config: Config = {
  ...testConfig({ urls: ["http://127.0.0.1:8545"] }),
  protocols: [{ id: "swap", name: "Swap", contracts: [], tvlAddresses: [PAIR], actions: {} }],
  tokens: [
    {
      address: USDC,
      symbol: "USDC",
      name: "USD",
      decimals: 6,
      protocol: "swap",
      color: "#888888",
      logo: "",
      official: true,
      exclusive: true,
    },
  ],
};

/** A price engine answering a fixed USDC price (the engine itself is tested in src/prices). */
function fixedPrices(usd: () => number): PriceEngine & { calls: number } {
  const engine = {
    calls: 0,
    async pricesOf(tokens: readonly string[]) {
      engine.calls++;
      const price: Price = { usd: usd(), source: "static", at: START };
      return new Map(tokens.map((t) => [t, t === USDC ? price : null]));
    },
    async priceOf(token: string) {
      return (await engine.pricesOf([token])).get(token) ?? null;
    },
    refreshAll: () => engine.pricesOf([USDC]),
  };
  return engine;
}

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
  const db = tdb.database.db;
  // 1,000 USDC in the pair; one swap an hour ago (100 USDC in) and one two days ago.
  await db.execute(sql`insert into token_balances (token_address, holder, balance, block_number)
    values (${USDC}, ${PAIR}, 1000000000, 2)`);
  for (const [i, at] of [new Date(START.getTime() - 48 * HOUR), new Date(START.getTime() - HOUR)].entries()) {
    const hash = `0x${(i + 1).toString(16).padStart(64, "0")}`;
    await db.execute(sql`insert into transactions (hash, block_number, block_hash, transaction_index, block_timestamp,
      from_address, to_address, value_wei, gas_used, gas_price, status, protocol, action_type, function_name,
      function_args, source) values (${hash}, ${i + 1}, ${hash}, 0, ${at.toISOString()}::timestamptz, ${USER},
      ${PAIR}, 0, 1, 1, true, 'swap', 'swap', 'f', '{}', 'poll')`);
    await db.execute(sql`insert into token_transfers (tx_hash, log_index, block_number, transaction_index,
      block_timestamp, token_address, from_address, to_address, amount) values (${hash}, 0, ${i + 1}, 0,
      ${at.toISOString()}::timestamptz, ${USDC}, ${USER}, ${PAIR}, 100000000)`);
    await db.execute(sql`insert into blocks (number, hash, parent_hash, timestamp)
      values (${i + 1}, ${hash}, ${hash}, ${at.toISOString()}::timestamptz)`);
  }
});
afterAll(() => tdb?.cleanup());

test("default: tvl, dailyVolume and last24h over the trailing 24 hours of the clock", async () => {
  const stats = createUsdStats(testCommon(config), {
    db: tdb.database.db,
    prices: fixedPrices(() => 1),
    now: () => START,
    maxAgeMs: 0,
  });
  const figures = await stats.figures();
  expect(figures).toEqual({
    at: START,
    since: new Date(START.getTime() - 24 * HOUR),
    until: START,
    protocols: new Map([["swap", { tvl: 1000, dailyVolume: 100 }]]),
    last24h: { transactions: 1, volumeUsd: 100 },
  });
});

test("behavior: a chain ahead of the clock ends the window at its newest block", async () => {
  // The clock is 2 days behind the newest block: the window follows the chain, not the clock.
  const stats = createUsdStats(testCommon(config), {
    db: tdb.database.db,
    prices: fixedPrices(() => 1),
    now: () => new Date(START.getTime() - 72 * HOUR),
    maxAgeMs: 0,
  });
  const figures = await stats.figures();
  expect(figures.until).toEqual(new Date(START.getTime() - HOUR));
  expect(figures.last24h).toEqual({ transactions: 1, volumeUsd: 100 });
});

test("behavior: figures are kept maxAgeMs, then the last ones are served while new ones are computed", async () => {
  let clock = START;
  let usd = 1;
  const prices = fixedPrices(() => usd);
  const stats = createUsdStats(testCommon(config), {
    db: tdb.database.db,
    prices,
    now: () => clock,
    maxAgeMs: 5000,
  });
  expect((await stats.figures()).protocols.get("swap")).toEqual({ tvl: 1000, dailyVolume: 100 });
  usd = 2;
  clock = new Date(START.getTime() + 4999);
  expect((await stats.figures()).protocols.get("swap")?.tvl).toBe(1000);
  expect(prices.calls).toBe(1);
  clock = new Date(START.getTime() + 5000);
  // Expired: the old figures answer at once, and one computation starts for every caller.
  const [a, b] = await Promise.all([stats.figures(), stats.figures()]);
  expect([a.protocols.get("swap")?.tvl, b.protocols.get("swap")?.tvl]).toEqual([1000, 1000]);
  await vi.waitFor(async () => {
    // The balance is worth the new price; the swap keeps the value it was given when first valued.
    expect((await stats.figures()).protocols.get("swap")).toEqual({ tvl: 2000, dailyVolume: 100 });
  });
  expect(prices.calls).toBe(2);
});

test("behavior: while the indexer catches up, new transactions count but are valued only after it", async () => {
  const db = tdb.database.db;
  // A second swap half an hour ago, 50 USDC in: stored while the indexer is catching up.
  const at = new Date(START.getTime() - HOUR / 2);
  const hash = `0x${"3".padStart(64, "0")}`;
  await db.execute(sql`insert into transactions (hash, block_number, block_hash, transaction_index, block_timestamp,
    from_address, to_address, value_wei, gas_used, gas_price, status, protocol, action_type, function_name,
    function_args, source) values (${hash}, 3, ${hash}, 0, ${at.toISOString()}::timestamptz, ${USER},
    ${PAIR}, 0, 1, 1, true, 'swap', 'swap', 'f', '{}', 'poll')`);
  await db.execute(sql`insert into token_transfers (tx_hash, log_index, block_number, transaction_index,
    block_timestamp, token_address, from_address, to_address, amount) values (${hash}, 0, 3, 0,
    ${at.toISOString()}::timestamptz, ${USDC}, ${USER}, ${PAIR}, 50000000)`);
  let catchingUp = true;
  const stats = createUsdStats(testCommon(config), {
    db,
    prices: fixedPrices(() => 1),
    now: () => START,
    maxAgeMs: 0,
    deferValuation: () => catchingUp,
  });
  expect((await stats.figures()).last24h).toEqual({ transactions: 2, volumeUsd: 100 });
  const pending = await db.execute<{ n: string }>(
    sql`select count(*) as n from transaction_volumes where volume_usd is null`,
  );
  expect(pending.rows).toEqual([{ n: "1" }]);
  catchingUp = false;
  expect((await stats.figures()).last24h).toEqual({ transactions: 2, volumeUsd: 150 });
  expect((await stats.figures()).protocols.get("swap")?.dailyVolume).toBe(150);
});
