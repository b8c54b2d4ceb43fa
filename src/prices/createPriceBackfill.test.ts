import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import type { Address, Config } from "../config/schema.ts";
import type { Db } from "../store/createDatabase.ts";
import { getBackfillProgress } from "../store/priceBackfillState.ts";
import { type PriceServer, startPriceServer } from "./_test/priceServer.ts";
import { createPriceBackfill } from "./createPriceBackfill.ts";

const KEY = "alcht_backfillKEY0123456789";
const HOUR = 3600;
const A = "0x00000000000000000000000000000000000000a1" as Address;
const B = "0x00000000000000000000000000000000000000b2" as Address;
/** the earliest stored transaction: 2026-11-01T00:30Z; the clock: 2026-11-20T12:10Z (19.5 days later) */
const FIRST_TX = new Date("2026-11-01T00:30:00Z");
const NOW = new Date("2026-11-20T12:10:00Z");
const SINCE = Date.parse("2026-11-01T00:00:00Z") / 1000;
const UNTIL = Date.parse("2026-11-20T12:00:00Z") / 1000;

let tdb: TestDatabase;
let db: Db;
let server: PriceServer;

function config(kind: "alchemy" | "defillama"): Config {
  const token = (address: Address) => ({
    address,
    symbol: "T",
    name: "T",
    decimals: 18,
    protocol: "p",
    color: "#888888",
    logo: "",
    official: false,
    exclusive: false,
  });
  return {
    ...testConfig({ urls: ["http://127.0.0.1:1"] }, 1),
    prices: {
      cacheSeconds: 300,
      api: { kind, baseUrl: server.url, ...(kind === "alchemy" ? { apiKey: KEY } : {}) },
    },
    tokens: [token(A), token(B)],
  };
}

async function points(token: string): Promise<{ t: number; usd: number }[]> {
  const result = await db.execute<{ time: string | Date; price_usd: number }>(
    sql`select time, price_usd from price_history where token_address = ${token} and source = 'api' order by time`,
  );
  return result.rows.map((r) => ({ t: new Date(r.time).getTime() / 1000, usd: Number(r.price_usd) }));
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  db = tdb.database.db;
  server = await startPriceServer({ apiKey: KEY });
  // A has a price every hour (its hour number / 1000), B only on even hours.
  server.history.set(A, (t) => t / HOUR / 1000);
  server.history.set(B, (t) => ((t / HOUR) % 2 === 0 ? 2 : undefined));
  await db.execute(sql`insert into transactions (hash, block_number, block_hash, transaction_index,
    block_timestamp, from_address, to_address, value_wei, gas_used, gas_price, status, protocol, action_type,
    function_name, function_args, source) values (${`0x${"1".repeat(64)}`}, 1, ${`0x${"1".repeat(64)}`}, 0,
    ${FIRST_TX.toISOString()}, ${A}, ${A}, 0, 21000, 1, true, 'p', 'transfer', 'transfer', '{}', 'poll')`);
});
afterAll(async () => {
  await server?.close();
  await tdb?.cleanup();
});
beforeEach(async () => {
  await db.execute(sql`delete from price_history`);
  await db.execute(sql`delete from price_backfill`);
  server.requests.length = 0;
  server.down = false;
});

describe.each(["alchemy", "defillama"] as const)("createPriceBackfill (%s)", (kind) => {
  test("default: every hour of the indexed range, newest week first, then back to the start", async () => {
    const backfill = createPriceBackfill(testCommon(config(kind)), { db, now: () => NOW, minIntervalMs: 0 })!;
    expect(backfill.filling()).toBe(false);
    let steps = 0;
    const filling: boolean[] = [];
    while (await backfill.step()) {
      steps++;
      filling.push(backfill.filling());
    }
    // 19.5 days = 3 weekly chunks per token; filling while chunks are stored, not once none is left
    expect(steps).toBe(6);
    expect(filling).toEqual([true, true, true, true, true, true]);
    expect(backfill.filling()).toBe(false);
    const ranges = server.requests.filter((r) => r.tokens[0] === A.toLowerCase()).map((r) => r.range);
    expect(ranges[0]).toEqual({ start: UNTIL - 168 * HOUR, end: UNTIL });
    expect(ranges.at(-1)!.start).toBe(SINCE);
    const a = await points(A.toLowerCase());
    expect(a).toHaveLength((UNTIL - SINCE) / HOUR + 1);
    expect(a.every((p) => p.usd === p.t / HOUR / 1000)).toBe(true);
    const b = await points(B.toLowerCase());
    expect(b).toHaveLength((UNTIL - SINCE) / HOUR / 2 + 1);
    expect(await getBackfillProgress(db, kind)).toEqual(
      new Map([
        [A.toLowerCase(), { coveredFrom: new Date(SINCE * 1000), coveredTo: new Date(UNTIL * 1000) }],
        [B.toLowerCase(), { coveredFrom: new Date(SINCE * 1000), coveredTo: new Date(UNTIL * 1000) }],
      ]),
    );
  });

  test("behavior: filling() stays true while the step after a stored chunk runs", async () => {
    const backfill = createPriceBackfill(testCommon(config(kind)), { db, now: () => NOW, minIntervalMs: 0 })!;
    expect(await backfill.step()).toBe(true);
    const running = backfill.step();
    expect(backfill.filling()).toBe(true);
    expect(await running).toBe(true);
    expect(backfill.filling()).toBe(true);
  });

  test("behavior: a new instance resumes from the stored progress; later hours are fetched as time passes", async () => {
    const first = createPriceBackfill(testCommon(config(kind)), { db, now: () => NOW, minIntervalMs: 0 })!;
    expect(await first.step()).toBe(true);
    expect(await first.step()).toBe(true);
    const asked = server.requests.length;
    const later = new Date(NOW.getTime() + 3 * HOUR * 1000);
    const second = createPriceBackfill(testCommon(config(kind)), { db, now: () => later, minIntervalMs: 0 })!;
    while (await second.step());
    const ranges = server.requests.slice(asked).map((r) => `${r.tokens[0]} ${r.range!.start}`);
    // nothing fetched twice: the first instance's two chunks are not asked again
    expect(new Set(ranges).size).toBe(ranges.length);
    expect(ranges).not.toContain(`${A.toLowerCase()} ${UNTIL - 168 * HOUR}`);
    expect(await points(A.toLowerCase())).toHaveLength((UNTIL + 3 * HOUR - SINCE) / HOUR + 1);
  });

  test("error: a failing provider stores nothing and is asked again later", async () => {
    server.down = true;
    const backfill = createPriceBackfill(testCommon(config(kind)), { db, now: () => NOW, minIntervalMs: 0 })!;
    expect(await backfill.step()).toBe(true);
    expect(await getBackfillProgress(db, kind)).toEqual(new Map());
    // An outage is not filling: the history valuer does not wait on it.
    expect(backfill.filling()).toBe(false);
    server.down = false;
    while (await backfill.step());
    expect(await points(A.toLowerCase())).toHaveLength((UNTIL - SINCE) / HOUR + 1);
  });
});

test("default: none without prices.api", () => {
  const plain = { ...config("defillama"), prices: { cacheSeconds: 300 } };
  expect(createPriceBackfill(testCommon(plain), { db })).toBeNull();
});
