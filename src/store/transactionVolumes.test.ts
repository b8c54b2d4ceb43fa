import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../../test/helpers/db.ts";
import { captureQueries, explainQuery } from "../../test/helpers/explain.ts";
import type { Db } from "./createDatabase.ts";
import {
  getWindowFigures,
  pruneVolumes,
  resetVolumesOfOtherConfigs,
  valuePendingVolumes,
} from "./transactionVolumes.ts";

const HOUR = 3600 * 1000;
const hex = (i: number, width: number) => `0x${i.toString(16).padStart(width, "0")}`;
const [USDC, WETH, DEMO, RWD] = [hex(0xa1, 40), hex(0xa2, 40), hex(0xa3, 40), hex(0xa4, 40)];
const [PAIR, PAIR2, VAULT] = [hex(0xb1, 40), hex(0xb2, 40), hex(0xb3, 40)];
const [U1, U2, U3] = [hex(0xc1, 40), hex(0xc2, 40), hex(0xc3, 40)];
const e = (amount: number, decimals: number) =>
  BigInt(Math.round(amount * 1e6)) * 10n ** BigInt(decimals - 6);
/** USDC 1, WETH 3000, DEMO 0.5; RWD unpriced. */
const usdPerUnit = [
  { token: USDC, usd: 1 / 1e6 },
  { token: WETH, usd: 3000 / 1e18 },
  { token: DEMO, usd: 0.5 / 1e18 },
];
const protocolAddresses = [
  { protocol: "swap", address: PAIR },
  { protocol: "swap", address: PAIR2 },
  { protocol: "vault", address: VAULT },
];
type Transfer = [token: string, from: string, to: string, amount: bigint];
/** A window start that is not on an hour: 30 minutes past the hour, 20 hours ago. */
const SINCE = new Date(Math.floor((Date.now() - 20 * HOUR) / HOUR) * HOUR + HOUR / 2);
const FIRST_HOUR = new Date(SINCE.getTime() + HOUR / 2);

let n = 0;
async function insertTx(db: Db, protocol: string, at: Date, transfers: Transfer[] = []): Promise<string> {
  const i = n++;
  const hash = hex(i, 64);
  await db.execute(sql`
    insert into transactions (hash, block_number, block_hash, transaction_index, block_timestamp, from_address,
      to_address, value_wei, gas_used, gas_price, status, protocol, action_type, function_name, function_args, source)
    values (${hash}, ${i}, ${hash}, 0, ${at.toISOString()}::timestamptz, ${U1}, ${PAIR}, 0, 1, 1, true,
      ${protocol}, 'swap', 'f', '{}', 'poll')`);
  for (const [log, [token, from, to, amount]] of transfers.entries()) {
    await db.execute(sql`
      insert into token_transfers (tx_hash, log_index, block_number, transaction_index, block_timestamp,
        token_address, from_address, to_address, amount)
      values (${hash}, ${log}, ${i}, 0, ${at.toISOString()}::timestamptz, ${token}, ${from}, ${to},
        ${amount.toString()}::numeric)`);
  }
  return hash;
}

/** The window's pending rows, as (hash, protocol). */
async function pendingRows(db: Db) {
  const result = await db.execute<{ tx_hash: string; protocol: string }>(sql`
    select tx_hash, protocol from transaction_volumes
    where volume_usd is null and block_timestamp >= ${SINCE.toISOString()}::timestamptz order by tx_hash`);
  return result.rows.map((r) => ({ txHash: r.tx_hash, protocol: r.protocol }));
}

/** Value rows directly, as another process would (fires the triggers like valuePendingVolumes). */
async function setVolumes(db: Db, volumes: { txHash: string; usd: number }[], configHash: string) {
  for (const v of volumes) {
    await db.execute(sql`update transaction_volumes set volume_usd = ${v.usd}, config_hash = ${configHash}
      where tx_hash = ${v.txHash} and volume_usd is null`);
  }
}

const value = (db: Db, prices = usdPerUnit) =>
  valuePendingVolumes(db, {
    since: SINCE,
    limit: 1000,
    protocolAddresses,
    usdPerUnit: prices,
    configHash: "cfg",
    valuedAt: new Date(),
  });

/** The SPEC §7 rule, written independently of the SQL: the oracle of the valuation test. */
function expectedVolume(protocol: string, transfers: Transfer[]): number {
  const own = new Set(protocolAddresses.filter((p) => p.protocol === protocol).map((p) => p.address));
  const usd = ([token, , , amount]: Transfer) =>
    Number(amount) * (usdPerUnit.find((p) => p.token === token)?.usd ?? 0);
  const into = transfers.filter(([, , to]) => own.has(to));
  const outOf = transfers.filter(([, from]) => own.has(from));
  const sum = (list: Transfer[]) => list.reduce((s, t) => s + usd(t), 0);
  if (into.length > 0 || outOf.length > 0) return Math.max(sum(into), sum(outOf));
  return Math.max(0, ...transfers.map(usd));
}

/** The hour sums recomputed from the rows: what the triggers must keep. */
async function recount(db: Db) {
  const result = await db.execute<{ protocol: string; hour: string; n: string; usd: string }>(sql`
    select protocol, date_trunc('hour', block_timestamp, 'UTC')::text as hour, count(*)::text as n,
      coalesce(sum(volume_usd::numeric), 0)::text as usd
    from transaction_volumes group by 1, 2 order by 1, 2`);
  const kept = await db.execute<{ protocol: string; hour: string; n: string; usd: string }>(sql`
    select protocol, hour::text as hour, transactions::text as n, volume_usd::text as usd
    from protocol_volume_hours order by 1, 2`);
  return { recounted: result.rows, kept: kept.rows };
}

/** 20,000 transactions of the last 20 hours, one USDC transfer each into the pair: 20,000 pending rows. */
async function insertBacklog(db: Db): Promise<void> {
  await db.execute(sql`
    insert into transactions (hash, block_number, block_hash, transaction_index, block_timestamp, from_address,
      to_address, value_wei, gas_used, gas_price, status, protocol, action_type, function_name, function_args, source)
    select '0xee' || lpad(to_hex(i), 62, '0'), i, '0xee' || lpad(to_hex(i), 62, '0'), 0,
      now() - make_interval(secs => i * 3.6), ${U1}, ${PAIR}, 0, 1, 1, true, 'swap', 'swap', 'f', '{}', 'poll'
    from generate_series(0, 19999) i`);
  await db.execute(sql`
    insert into token_transfers (tx_hash, log_index, block_number, transaction_index, block_timestamp,
      token_address, from_address, to_address, amount)
    select hash, 0, block_number, 0, block_timestamp, ${USDC}, ${U1}, ${PAIR}, 1000000 from transactions`);
}

describe("transactionVolumes", () => {
  let tdb: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = tdb.database.db;
  });
  afterAll(() => tdb?.cleanup());
  beforeEach(async () => {
    await db.execute(sql`truncate transactions, token_transfers`);
  });

  test("default: recent transactions become pending rows; older than 25 hours none", async () => {
    const recent = await insertTx(db, "swap", new Date(Date.now() - HOUR));
    await insertTx(db, "swap", new Date(Date.now() - 26 * HOUR));
    expect(await pendingRows(db)).toEqual([{ txHash: recent, protocol: "swap" }]);
    // Not valued yet: counted as a transaction, worth 0.
    expect(await getWindowFigures(db, SINCE)).toEqual(new Map([["swap", { transactions: 1, volumeUsd: 0 }]]));
  });

  test("default: valuation follows SPEC §7 per transaction, once", async () => {
    const at = new Date(Date.now() - HOUR);
    const cases: [string, Transfer[]][] = [
      // 100 USDC in, 0.05 WETH (150 USD) out: 150
      [
        "swap",
        [
          [USDC, U1, PAIR, e(100, 6)],
          [WETH, PAIR, U1, e(0.05, 18)],
        ],
      ],
      // neither in nor out: the largest transfer, 10 DEMO = 5
      [
        "swap",
        [
          [DEMO, U1, U2, e(10, 18)],
          [DEMO, U2, U3, e(4, 18)],
        ],
      ],
      // into the protocol but unpriced: 0, not the largest-transfer fallback
      [
        "swap",
        [
          [RWD, U1, PAIR, e(1000, 18)],
          [USDC, U2, U3, e(7, 6)],
        ],
      ],
      // between two of its own addresses: in and out, 50
      ["swap", [[USDC, PAIR, PAIR2, e(50, 6)]]],
      // several tokens on one side add up: 1 WETH + 3000 USDC = 6000
      [
        "swap",
        [
          [WETH, U1, PAIR, e(1, 18)],
          [USDC, U1, PAIR, e(3000, 6)],
        ],
      ],
      // no transfer: 0
      ["swap", []],
      // the pair is not the vault's: only the 20 DEMO into the vault count, 10
      [
        "vault",
        [
          [DEMO, U1, VAULT, e(20, 18)],
          [USDC, U1, PAIR, e(100, 6)],
        ],
      ],
    ];
    const hashes: string[] = [];
    for (const [protocol, transfers] of cases) hashes.push(await insertTx(db, protocol, at, transfers));
    expect(await value(db)).toBe(cases.length);
    const rows = await db.execute<{ tx_hash: string; volume_usd: number }>(
      sql`select tx_hash, volume_usd from transaction_volumes order by tx_hash`,
    );
    const got = new Map(rows.rows.map((r) => [r.tx_hash, Number(r.volume_usd)]));
    cases.forEach(([protocol, transfers], i) => {
      expect(got.get(hashes[i]!), `case ${i}`).toBeCloseTo(expectedVolume(protocol, transfers), 9);
    });
    expect([...got.values()].map((v) => Math.round(v * 1e6) / 1e6)).toEqual([150, 5, 0, 50, 6000, 0, 10]);
    // Valued once: new prices do not change a valued transaction.
    expect(
      await value(
        db,
        usdPerUnit.map((p) => ({ ...p, usd: p.usd * 2 })),
      ),
    ).toBe(0);
    const figures = await getWindowFigures(db, SINCE);
    expect(figures.get("swap")?.volumeUsd).toBeCloseTo(150 + 5 + 50 + 6000, 9);
    expect(figures.get("vault")).toEqual({ transactions: 1, volumeUsd: 10 });
  });

  test("default: the window is the whole hours' sums plus the rows of the partial first hour", async () => {
    const before = await insertTx(db, "swap", new Date(SINCE.getTime() - 10 * 60_000));
    const partial = await insertTx(db, "swap", new Date(SINCE.getTime() + 10 * 60_000));
    const atStart = await insertTx(db, "swap", SINCE);
    const whole = await insertTx(db, "swap", new Date(FIRST_HOUR.getTime() + 5 * 60_000));
    const vault = await insertTx(db, "vault", new Date(Date.now() - HOUR));
    const pending = await pendingRows(db);
    expect(pending.map((p) => p.txHash).sort()).toEqual([partial, atStart, whole, vault].sort());
    await setVolumes(
      db,
      [
        { txHash: before, usd: 1000 },
        { txHash: partial, usd: 1.25 },
        { txHash: atStart, usd: 2 },
        { txHash: whole, usd: 0.1 },
        { txHash: vault, usd: 7 },
      ],
      "cfg",
    );
    expect(await pendingRows(db)).toEqual([]);
    const figures = await getWindowFigures(db, SINCE);
    expect(figures.get("swap")?.transactions).toBe(3);
    expect(figures.get("swap")?.volumeUsd).toBeCloseTo(3.35, 12);
    expect(figures.get("vault")).toEqual({ transactions: 1, volumeUsd: 7 });
    const { recounted, kept } = await recount(db);
    expect(kept).toEqual(recounted);
  });

  test("behavior: a row is valued once, even when two processes value it", async () => {
    const hash = await insertTx(db, "swap", new Date(Date.now() - HOUR));
    await setVolumes(db, [{ txHash: hash, usd: 10 }], "cfg");
    await setVolumes(db, [{ txHash: hash, usd: 99 }], "cfg");
    expect(await value(db)).toBe(0);
    expect((await getWindowFigures(db, SINCE)).get("swap")).toEqual({ transactions: 1, volumeUsd: 10 });
  });

  test("behavior: rollback, re-attribution and TRUNCATE keep the hour sums exact", async () => {
    const hashes: string[] = [];
    for (let i = 0; i < 6; i++) hashes.push(await insertTx(db, "swap", new Date(Date.now() - i * HOUR)));
    await setVolumes(
      db,
      hashes.map((txHash, i) => ({ txHash, usd: 0.1 * (i + 1) })),
      "cfg",
    );
    // A reorg rollback deletes transactions: their volumes leave the sums exactly, empty hours disappear.
    await db.execute(sql`delete from transactions where hash in (${hashes[0]}, ${hashes[3]})`);
    let { recounted, kept } = await recount(db);
    expect(kept).toEqual(recounted);
    expect(kept).toHaveLength(4);
    expect((await getWindowFigures(db, SINCE)).get("swap")?.volumeUsd).toBeCloseTo(0.2 + 0.3 + 0.5 + 0.6, 12);
    // Re-attributed to another protocol: valued again, under its new protocol.
    await db.execute(sql`update transactions set protocol = 'vault' where hash = ${hashes[1]}`);
    expect(await pendingRows(db)).toEqual([{ txHash: hashes[1], protocol: "vault" }]);
    ({ recounted, kept } = await recount(db));
    expect(kept).toEqual(recounted);
    await db.execute(sql`truncate transactions`);
    expect(await getWindowFigures(db, SINCE)).toEqual(new Map());
    ({ recounted, kept } = await recount(db));
    expect(kept).toEqual([]);
  });

  test("behavior: a configuration change puts the window's valued rows back to pending", async () => {
    const a = await insertTx(db, "swap", new Date(Date.now() - HOUR));
    const b = await insertTx(db, "swap", new Date(Date.now() - 2 * HOUR));
    await setVolumes(db, [{ txHash: a, usd: 1 }], "old");
    await setVolumes(db, [{ txHash: b, usd: 2 }], "new");
    expect(await resetVolumesOfOtherConfigs(db, "new", SINCE)).toBe(1);
    expect(await pendingRows(db)).toEqual([{ txHash: a, protocol: "swap" }]);
    expect((await getWindowFigures(db, SINCE)).get("swap")).toEqual({ transactions: 2, volumeUsd: 2 });
    expect(await resetVolumesOfOtherConfigs(db, "new", SINCE)).toBe(0);
  });

  test("behavior: pruning drops rows and hour sums before the given time", async () => {
    await insertTx(db, "swap", new Date(Date.now() - 24.5 * HOUR));
    await insertTx(db, "swap", new Date(Date.now() - HOUR));
    await pruneVolumes(db, new Date(Date.now() - 24 * HOUR));
    const rows = await db.execute<{ n: string }>(sql`select count(*)::text as n from transaction_volumes`);
    expect(rows.rows[0]?.n).toBe("1");
    const { recounted, kept } = await recount(db);
    expect(kept).toEqual(recounted);
  });

  test("behavior: the window reads the hour sums by key and the partial hour by the timestamp index", async () => {
    // 20,000 transactions over the last 20 hours, valued.
    await db.execute(sql`
      insert into transactions (hash, block_number, block_hash, transaction_index, block_timestamp, from_address,
        to_address, value_wei, gas_used, gas_price, status, protocol, action_type, function_name, function_args, source)
      select '0xee' || lpad(to_hex(i), 62, '0'), i, '0xee' || lpad(to_hex(i), 62, '0'), 0,
        now() - make_interval(secs => i * 3.6), ${U1}, ${PAIR}, 0, 1, 1, true,
        (array['swap', 'vault'])[1 + i % 2], 'swap', 'f', '{}', 'poll'
      from generate_series(0, 19999) i`);
    await db.execute(sql`update transaction_volumes set volume_usd = 1, config_hash = 'cfg'`);
    await db.execute(sql`analyze transaction_volumes`);
    await db.execute(sql`analyze protocol_volume_hours`);
    const figures = await getWindowFigures(db, SINCE);
    const inWindow = await db.execute<{ n: string }>(
      sql`select count(*)::text as n from transactions where block_timestamp >= ${SINCE.toISOString()}::timestamptz`,
    );
    expect((figures.get("swap")?.transactions ?? 0) + (figures.get("vault")?.transactions ?? 0)).toBe(
      Number(inWindow.rows[0]?.n),
    );
    const queries = await captureQueries(tdb.database, () => getWindowFigures(db, SINCE));
    const plan = await explainQuery(tdb.database, queries.at(-1)!);
    expect(plan).not.toMatch(/Seq Scan on transaction_volumes/);
    expect(plan).toMatch(/transaction_volumes_timestamp_idx/);
  });

  test("behavior: valuation reads pending rows by their partial index and transfers by primary key", async () => {
    await insertBacklog(db);
    await db.execute(
      sql`update transaction_volumes set volume_usd = 1 where tx_hash > '0xee' || lpad(to_hex(100), 62, '0')`,
    );
    await db.execute(sql`analyze`);
    const queries = await captureQueries(tdb.database, () => value(db));
    const plan = await explainQuery(tdb.database, queries.at(-1)!);
    expect(plan).toMatch(/transaction_volumes_pending_idx/);
    expect(plan).toMatch(/Index Scan using token_transfers_block_tx_log_pk on token_transfers/);
    expect(plan).not.toMatch(/Seq Scan on (transaction_volumes|token_transfers)/);
  });

  test("behavior: a backlog is valued batch by batch, newest first, read backward from an index without a sort", async () => {
    await insertBacklog(db);
    await db.execute(sql`analyze`);
    const queries = await captureQueries(tdb.database, () => value(db));
    const plan = await explainQuery(tdb.database, queries.at(-1)!);
    // the limit stops a backward read of an index on block_timestamp: no scan of every pending row, no sort
    // of them (with every row pending, the partial index and the full one cost the same to the planner)
    expect(plan).toMatch(
      /Limit[^\n]*\n\s*->\s+Index Scan Backward using transaction_volumes_(pending|timestamp)_idx on transaction_volumes/,
    );
    expect(plan).not.toMatch(/Sort Key: [\w.]*block_timestamp/);
    // and that batch valued exactly the 1,000 newest pending rows
    const split = await db.execute<{
      valued: string;
      newest_pending: string | null;
      oldest_valued: string | null;
    }>(sql`
      select count(*) filter (where volume_usd is not null) as valued,
        max(block_timestamp) filter (where volume_usd is null)::text as newest_pending,
        min(block_timestamp) filter (where volume_usd is not null)::text as oldest_valued
      from transaction_volumes`);
    const row = split.rows[0]!;
    expect(Number(row.valued)).toBe(1000);
    expect(new Date(row.oldest_valued!).getTime()).toBeGreaterThan(new Date(row.newest_pending!).getTime());
  });
});

describe.skipIf(testDatabaseUrl() === undefined)(
  "transactionVolumes beside an ingest commit (PostgreSQL)",
  () => {
    let tdb: TestDatabase;
    let db: Db;
    beforeAll(async () => {
      tdb = await createTestDatabase();
      db = tdb.database.db;
    });
    afterAll(() => tdb?.cleanup());

    /** Sessions of this database waiting for a lock held by another. */
    async function lockWaiters(): Promise<number> {
      const result = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`);
      return result.rows[0]?.n ?? 0;
    }

    test("behavior: valuation that deadlocks with a commit is run again and values every row once", async () => {
      // The hour sums of both protocols exist; valuing takes (swap, hour) and then (vault, hour).
      const at = new Date(Date.now() - HOUR);
      await insertTx(db, "swap", at, [[USDC, U1, PAIR, e(10, 6)]]);
      await insertTx(db, "vault", at, [[USDC, U1, VAULT, e(20, 6)]]);
      let holding!: () => void;
      const held = new Promise<void>((resolve) => {
        holding = resolve;
      });
      // A commit inserting its transactions in two statements: vault's hour row first, swap's afterwards.
      const commit = db
        .transaction(async (tx) => {
          await insertTx(tx as unknown as Db, "vault", at);
          holding();
          while ((await lockWaiters()) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
          await insertTx(tx as unknown as Db, "swap", at);
        })
        .then(
          () => "committed",
          (error: unknown) => `aborted: ${String(error)}`,
        );
      await held;
      const valued = await value(db);
      const outcome = await commit;
      // PostgreSQL aborts one of the two; the valuation survives either way, and no row is valued twice.
      const pending = await pendingRows(db);
      expect(valued + pending.length).toBe(outcome === "committed" ? 4 : 2);
      expect((await getWindowFigures(db, SINCE)).get("swap")?.volumeUsd).toBe(10);
      expect((await getWindowFigures(db, SINCE)).get("vault")?.volumeUsd).toBe(20);
      const { recounted, kept } = await recount(db);
      expect(kept).toEqual(recounted);
    });
  },
);
