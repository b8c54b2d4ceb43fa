import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { captureQueries, explainQuery } from "../../test/helpers/explain.ts";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import type { Address, Config, TokenConfig } from "../config/schema.ts";
import { listenForChanges } from "../store/changeNotices.ts";
import type { Db } from "../store/createDatabase.ts";
import { insertPricePoints } from "../store/priceHistoryReads.ts";
import { SYNC_TOPIC } from "../store/schema.ts";
import { createPriceHistory, type PriceHistory } from "./createPriceHistory.ts";

const hex = (i: number, width: number) => `0x${i.toString(16).padStart(width, "0")}` as Address;
// A < Q: in pool P, A is token0.  C > Q2: in pool P2, C is token1.
const [A, Q, B, C, Q2] = [hex(0xa1, 40), hex(0xa2, 40), hex(0xa3, 40), hex(0xa5, 40), hex(0xa4, 40)];
const [P, P2, PB] = [hex(0xb1, 40), hex(0xb2, 40), hex(0xb3, 40)];
const T0 = Date.parse("2026-11-20T00:00:00Z");
const at = (hours: number) => new Date(T0 + hours * 3_600_000);

function token(address: Address, decimals: number, price?: TokenConfig["price"]): TokenConfig {
  return {
    address,
    symbol: address.slice(-2),
    name: address,
    decimals,
    protocol: "p",
    color: "#888888",
    logo: "",
    official: false,
    exclusive: false,
    ...(price ? { price } : {}),
  };
}

function config(): Config {
  const base = testConfig({ urls: ["http://127.0.0.1:1"] });
  const contract = (address: Address, exclusive: boolean) => ({ name: address, address, abi: [], exclusive });
  return {
    ...base,
    protocols: [
      {
        id: "p",
        name: "P",
        contracts: [contract(P, true), contract(P2, true), contract(PB, false)],
        tvlAddresses: [P],
        actions: {},
      },
    ],
    tokens: [
      token(A, 18, { pool: P, quote: Q, minQuoteLiquidity: "100", usd: 0.5 }),
      token(Q, 6, { usd: 1 }),
      token(B, 18, { pool: PB, quote: Q, usd: 7 }),
      token(C, 18, { pool: P2, quote: Q2 }),
      token(Q2, 18, { pool: P2, quote: C }),
    ],
  };
}

let tdb: TestDatabase;
let db: Db;
let history: PriceHistory;

/** A stored transaction in block `n` at hour `h`, and a Sync log of `pool` in it. */
async function syncAt(n: number, h: number, pool: string, r0: bigint, r1: bigint) {
  const hash = hex(n, 64);
  await db.execute(sql`insert into transactions (hash, block_number, block_hash, transaction_index,
    block_timestamp, from_address, to_address, value_wei, gas_used, gas_price, status, protocol, action_type,
    function_name, function_args, source) values (${hash}, ${n}, ${hash}, 0, ${at(h).toISOString()},
    ${hex(1, 40)}, ${pool}, 0, 21000, 1, true, 'p', 'swap', 'swap', '{}', 'poll')`);
  const data = `0x${r0.toString(16).padStart(64, "0")}${r1.toString(16).padStart(64, "0")}`;
  await db.execute(sql`insert into logs (tx_hash, log_index, block_number, transaction_index, address, topics, data)
    values (${hash}, 0, ${n}, 0, ${pool}, ${`{${SYNC_TOPIC}}`}::text[], ${data})`);
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  db = tdb.database.db;
  history = createPriceHistory(testCommon(config()), { db });
  // A/Q: 1,000 Q for 500 A at block 10 (2 USD), 1,000 Q for 1,000 A at block 20 (1 USD), 50 Q at block 30.
  await syncAt(10, 1, P, 500n * 10n ** 18n, 1000n * 10n ** 6n);
  await syncAt(20, 5, P, 1000n * 10n ** 18n, 1000n * 10n ** 6n);
  await syncAt(30, 9, P, 1000n * 10n ** 18n, 50n * 10n ** 6n);
  await syncAt(40, 9.5, P2, 10n ** 18n, 10n ** 18n);
});
afterAll(() => tdb?.cleanup());

describe("priceAt", () => {
  test("behavior: dex from the last Sync at or before the block, times the quote's price", async () => {
    expect(await history.priceAt(A, at(1), 10)).toEqual({ usd: 2, source: "dex", at: at(1) });
    expect(await history.priceAt(A, at(3), 15)).toEqual({ usd: 2, source: "dex", at: at(3) });
    expect(await history.priceAt(A, at(5), 20)).toEqual({ usd: 1, source: "dex", at: at(5) });
  });

  test("behavior: without a block, the last stored block at or before the time", async () => {
    expect((await history.priceAt(A, at(4)))?.usd).toBe(2);
    expect((await history.priceAt(A, at(6)))?.usd).toBe(1);
  });

  test("behavior: below minQuoteLiquidity or before any Sync, the static price", async () => {
    expect(await history.priceAt(A, at(9), 30)).toEqual({ usd: 0.5, source: "static", at: at(9) });
    expect(await history.priceAt(A, at(0), 5)).toEqual({ usd: 0.5, source: "static", at: at(0) });
  });

  test("behavior: an api point at most an hour older wins; an older one does not", async () => {
    await insertPricePoints(db, [
      { tokenAddress: A, source: "api", time: at(5), priceUsd: 3, origin: "backfill" },
      { tokenAddress: Q, source: "api", time: at(0.5), priceUsd: 0.9, origin: "engine" },
    ]);
    expect(await history.priceAt(A, at(5.5), 20)).toEqual({ usd: 3, source: "api", at: at(5) });
    expect(await history.priceAt(A, at(6.01), 20)).toEqual({ usd: 1, source: "dex", at: at(6.01) });
    // the quote's api price at the same time carries into the dex price
    expect((await history.priceAt(A, at(1), 10))?.usd).toBeCloseTo(1.8, 12);
  });

  test("behavior: a pool that is not an exclusive contract uses the engine's recorded dex price", async () => {
    await insertPricePoints(db, [
      { tokenAddress: B, source: "dex", time: at(2), priceUsd: 4, origin: "engine" },
    ]);
    expect(await history.priceAt(B, at(2.5))).toEqual({ usd: 4, source: "dex", at: at(2) });
    expect(await history.priceAt(B, at(3.5))).toEqual({ usd: 7, source: "static", at: at(3.5) });
  });

  test("behavior: pools quoted in each other give no dex price (no static: null)", async () => {
    expect(await history.priceAt(C, at(10), 40)).toBeNull();
  });

  test("default: pricesAt answers in order, repeated questions once", async () => {
    const answers = await history.pricesAt([
      { token: A, time: at(1), blockNumber: 10 },
      { token: Q.toUpperCase(), time: at(1) },
      { token: A, time: at(1), blockNumber: 10 },
      { token: hex(0xee, 40), time: at(1) },
    ]);
    expect(answers.map((a) => a && [a.usd, a.source])).toEqual([
      [1.8, "dex"],
      [0.9, "api"],
      [1.8, "dex"],
      null,
    ]);
  });
});

describe("with the change notices", () => {
  test("behavior: questions outside their token's span of points cost no statement until price_history changes", async () => {
    const common = testCommon(config());
    const changes = await listenForChanges(tdb.database, { logger: common.logger });
    try {
      const heard = (table: string) =>
        new Promise<void>((resolve) => {
          const stop = changes.subscribe((notice) => {
            if (notice === table) {
              stop();
              resolve();
            }
          });
        });
      const kept = createPriceHistory(common, { db, changes });
      const priceHistoryReads = async (read: () => Promise<unknown>) =>
        (await captureQueries(tdb.database, read)).filter((q) => q.text.includes("price_history"));
      // Hours 1,000 on: after every point of A and Q. The first call reads the spans, the second nothing.
      const far = [
        { token: A, time: at(1000) },
        { token: Q, time: at(1000) },
      ];
      expect((await priceHistoryReads(() => kept.pricesAt(far))).length).toBeGreaterThan(0);
      expect(await kept.pricesAt(far)).toEqual([
        { usd: 0.5, source: "static", at: at(1000) },
        { usd: 1, source: "static", at: at(1000) },
      ]);
      expect(await priceHistoryReads(() => kept.pricesAt([{ token: A, time: at(1001) }]))).toEqual([]);
      // A point recorded later is heard: the spans are read again and the point answers.
      const recorded = heard("price_history");
      await insertPricePoints(db, [
        { tokenAddress: A, source: "api", time: at(1001), priceUsd: 5, origin: "engine" },
      ]);
      await recorded;
      expect(await kept.priceAt(A, at(1001.5))).toEqual({ usd: 5, source: "api", at: at(1001) });
      // Without the notices, the same history asks every time.
      expect((await priceHistoryReads(() => history.pricesAt(far))).length).toBeGreaterThan(0);
    } finally {
      await changes.close();
    }
  });
});

describe("pricesAt at scale", () => {
  test("behavior: 100 questions cost a few statements, each walking its index", async () => {
    // 6,000 transactions over 250 days with a log each, one in five a Sync of P; 2,000 api points of Q.
    await db.execute(sql`
      insert into transactions (hash, block_number, block_hash, transaction_index, block_timestamp, from_address,
        to_address, value_wei, gas_used, gas_price, status, protocol, action_type, function_name, function_args,
        source)
      select lpad(to_hex(i), 66, '0'), 1000 + i, lpad(to_hex(i), 66, '0'), 0,
        ${at(24).toISOString()}::timestamptz + i * interval '1 hour', ${hex(1, 40)}, ${P}, 0, 21000, 1, true, 'p',
        'swap', 'swap', '{}', 'poll'
      from generate_series(1, 6000) i`);
    await db.execute(sql`
      insert into logs (tx_hash, log_index, block_number, transaction_index, address, topics, data)
      select lpad(to_hex(i), 66, '0'), 0, 1000 + i, 0, case when i % 5 = 0 then ${P} else ${hex(0xcc, 40)} end,
        array[case when i % 5 = 0 then ${SYNC_TOPIC} else '0x' || lpad('1', 64, '0') end],
        '0x' || lpad(to_hex(1000 + i), 64, '0') || lpad(to_hex(100000000000 + i), 64, '0')
      from generate_series(1, 6000) i`);
    await db.execute(sql`
      insert into price_history (token_address, source, time, price_usd, origin)
      select ${Q}, 'api', ${at(24).toISOString()}::timestamptz + i * interval '3 hours', 1, 'backfill'
      from generate_series(1, 2000) i`);
    await db.execute(sql`analyze transactions`);
    await db.execute(sql`analyze logs`);
    await db.execute(sql`analyze price_history`);
    const questions = Array.from({ length: 100 }, (_, i) => ({
      token: i % 2 === 0 ? A : Q,
      time: at(24 + 50 * i + 0.5),
      ...(i % 4 === 0 ? {} : { blockNumber: 1000 + 50 * i }),
    }));
    const queries = await captureQueries(tdb.database, () => history.pricesAt(questions));
    // api (A, Q, and Q at the times of A, the quote its dex tier needs), then Syncs (A): two statements
    expect(queries).toHaveLength(2);
    const plans = await Promise.all(queries.map((q) => explainQuery(tdb.database, q)));
    const all = plans.join("\n---\n");
    expect(all).toContain("price_history_pk");
    expect(all).toContain("logs_sync_idx");
    expect(all).toContain("transactions_timestamp_idx");
    expect(all).not.toMatch(/Seq Scan on (logs|price_history|transactions)/);
    const answers = await history.pricesAt(questions);
    // Q: an api point every 3 hours (at most an hour old at half past only when one is on that hour), else static 1
    expect(answers.filter((a, i) => i % 2 === 1 && a?.usd === 1)).toHaveLength(50);
    expect(answers.filter((a, i) => i % 2 === 0 && a?.source === "dex").length).toBeGreaterThan(40);
  });
});
