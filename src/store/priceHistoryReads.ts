import { type SQL, sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { insertRows } from "./insertRows.ts";
import { logs, priceHistory, SYNC_TOPIC, transactions } from "./schema.ts";

/**
 * Reads and writes of price history (SPEC §10.1): recorded points (`price_history`) and the reserves of pools
 * at past blocks from their stored `Sync` logs (`logs_sync_idx`). Every read answers many questions in one
 * statement (a LATERAL seek per question): a page of transactions costs a statement per tier, not per row.
 */

/** A recorded price: what the engine resolved, or an hourly point of the api backfill. */
export type PricePointRow = {
  /** lowercase */
  tokenAddress: string;
  /** api | dex | static */
  source: string;
  /** when the price was true */
  time: Date;
  priceUsd: number;
  /** engine | backfill */
  origin: "engine" | "backfill";
};

/** Store points, in one statement; a point at the same (token, tier, time) replaces the earlier one. */
export async function insertPricePoints(db: Db, rows: readonly PricePointRow[]): Promise<void> {
  if (rows.length === 0) return;
  // One row per key: PostgreSQL refuses to update a row twice in one statement.
  const unique = new Map(rows.map((r) => [`${r.tokenAddress}|${r.source}|${r.time.getTime()}`, r]));
  await insertRows(
    db,
    priceHistory,
    [...unique.values()].map((r) => ({ ...r, tokenAddress: r.tokenAddress.toLowerCase() })),
    {
      onConflict: sql`on conflict (token_address, source, time) do update set price_usd = excluded.price_usd,
        origin = excluded.origin, recorded_at = now()
        where ${priceHistory.priceUsd} is distinct from excluded.price_usd`,
    },
  );
}

/** The latest recorded point of each (token, tier) asked about, keyed `token|source` (token lowercase). */
export async function getLatestPricePoints(
  db: Db,
  keys: readonly { token: string; source: string }[],
): Promise<Map<string, { priceUsd: number; time: Date }>> {
  const latest = new Map<string, { priceUsd: number; time: Date }>();
  if (keys.length === 0) return latest;
  const json = JSON.stringify(keys.map((k) => ({ token: k.token.toLowerCase(), source: k.source })));
  const h = priceHistory;
  const result = await db.execute<{
    token: string;
    source: string;
    price_usd: number;
    time: string | Date;
  }>(sql`
    select q.token, q.source, p.price_usd, p.time
    from json_to_recordset(${json}::json) as q(token text, source text)
    cross join lateral (
      select ${h.priceUsd} as price_usd, ${h.time} as time from ${h}
      where ${h.tokenAddress} = q.token and ${h.source} = q.source
      order by ${h.time} desc limit 1
    ) p`);
  for (const row of result.rows) {
    latest.set(`${row.token}|${row.source}`, { priceUsd: Number(row.price_usd), time: new Date(row.time) });
  }
  return latest;
}

/** The times of a token's first and last recorded point of one tier. */
export type RecordedSpan = { first: Date; last: Date };

/**
 * The select items `first` and `last`: the times of the first and last point of `token` and `source` (SQL
 * expressions of the enclosing query), two seeks of the primary key.
 */
function spanColumns(token: SQL, source: SQL): SQL {
  const h = priceHistory;
  return sql`(select min(${h.time}) from ${h} where ${h.tokenAddress} = ${token} and ${h.source} = ${source}) as first,
    (select max(${h.time}) from ${h} where ${h.tokenAddress} = ${token} and ${h.source} = ${source}) as last`;
}

/**
 * For each token (lowercase) with points of `source`, the times of its first and last one: two seeks of the
 * primary key per token. Tokens without any are left out.
 */
export async function getRecordedSpans(
  db: Db,
  source: string,
  tokens: readonly string[],
): Promise<Map<string, RecordedSpan>> {
  const spans = new Map<string, RecordedSpan>();
  if (tokens.length === 0) return spans;
  const result = await db.execute<{ token: string; first: string | Date; last: string | Date }>(sql`
    select k.token, ${spanColumns(sql`k.token`, sql`${source}`)}
    from unnest(${sql.param([...tokens])}::text[]) as k(token)`);
  for (const row of result.rows) {
    if (row.first !== null && row.last !== null) {
      spans.set(row.token, { first: new Date(row.first), last: new Date(row.last) });
    }
  }
  return spans;
}

/** One question for `getRecordedPricesAt`: the token's last `source` point at or before `at`. */
export type RecordedPriceQuery = { token: string; source: string; at: Date };

/**
 * For each question, the last recorded point of its token and tier at or before `at` and at most
 * `maxAgeMs` older than it (the primary key, walked backwards), or null. Answers in the questions' order.
 */
export async function getRecordedPricesAt(
  db: Db,
  queries: readonly RecordedPriceQuery[],
  maxAgeMs: number,
): Promise<({ priceUsd: number; time: Date } | null)[]> {
  if (queries.length === 0) return [];
  const json = JSON.stringify(
    queries.map((q, i) => ({ i, token: q.token.toLowerCase(), source: q.source, at: q.at.toISOString() })),
  );
  const h = priceHistory;
  // Only questions between the first point of their token and tier and an age after the last one can have an
  // answer (two seeks per token and tier): a long range before any point, or without any, costs no seek per
  // question.
  const result = await db.execute<{ i: number; price_usd: number; time: string | Date }>(sql`
    with q as materialized (
      select * from json_to_recordset(${json}::json) as q(i int, token text, source text, at timestamptz)
    ), spans as (
      select k.token, k.source, ${spanColumns(sql`k.token`, sql`k.source`)}
      from (select distinct token, source from q) k
    )
    select q.i, p.price_usd, p.time
    from q
    join spans s on s.token = q.token and s.source = q.source and q.at >= s.first
      and q.at - ${maxAgeMs / 1000}::float8 * interval '1 second' <= s.last
    cross join lateral (
      select ${h.priceUsd} as price_usd, ${h.time} as time from ${h}
      where ${h.tokenAddress} = q.token and ${h.source} = q.source and ${h.time} <= q.at
        and ${h.time} >= q.at - ${maxAgeMs / 1000}::float8 * interval '1 second'
      order by ${h.time} desc limit 1
    ) p`);
  const answers: ({ priceUsd: number; time: Date } | null)[] = queries.map(() => null);
  for (const row of result.rows) {
    answers[Number(row.i)] = { priceUsd: Number(row.price_usd), time: new Date(row.time) };
  }
  return answers;
}

/**
 * One question for `getSyncReservesAt`: the pool's last `Sync` at or before `blockNumber`, or, without one,
 * at or before the last stored block whose time is at or before `at`.
 */
export type SyncQuery = { pool: string; blockNumber?: number | undefined; at: Date };

/** A pool's reserves as its `Sync` log states them, and the block of that log. */
export type SyncReserves = { reserve0: bigint; reserve1: bigint; blockNumber: number };

/**
 * For each question, the reserves of the pool's last stored `Sync` log at or before the block (the pool's
 * state after that block), or null when none is stored. `Sync` logs are stored with the transactions that
 * emit them when the pool is an exclusive configured contract; a reorg removes them with their block.
 */
export async function getSyncReservesAt(
  db: Db,
  queries: readonly SyncQuery[],
): Promise<(SyncReserves | null)[]> {
  if (queries.length === 0) return [];
  const json = JSON.stringify(
    queries.map((q, i) => ({
      i,
      pool: q.pool.toLowerCase(),
      block: q.blockNumber ?? null,
      at: q.at.toISOString(),
    })),
  );
  const t = transactions;
  const result = await db.execute<{ i: number; block_number: string | number; data: string }>(sql`
    select q.i, s.block_number, s.data
    from json_to_recordset(${json}::json) as q(i int, pool text, block bigint, at timestamptz)
    cross join lateral (
      select coalesce(q.block, (
        select max(${t.blockNumber}) from ${t} where ${t.blockTimestamp} = (
          select max(${t.blockTimestamp}) from ${t} where ${t.blockTimestamp} <= q.at))) as bound
    ) b
    cross join lateral (
      select ${logs.blockNumber} as block_number, ${logs.data} as data from ${logs}
      where ${logs.address} = q.pool and ${sql.raw(`topics[1] = '${SYNC_TOPIC}'`)}
        and ${logs.blockNumber} <= b.bound
      order by ${logs.blockNumber} desc nulls last, ${logs.transactionIndex} desc nulls last,
        ${logs.logIndex} desc nulls last
      limit 1
    ) s`);
  const answers: (SyncReserves | null)[] = queries.map(() => null);
  for (const row of result.rows) {
    const reserves = decodeSyncData(row.data);
    if (reserves) answers[Number(row.i)] = { ...reserves, blockNumber: Number(row.block_number) };
  }
  return answers;
}

/** `Sync(uint112 reserve0, uint112 reserve1)`'s data: two 32-byte words; null when malformed. */
function decodeSyncData(data: string): { reserve0: bigint; reserve1: bigint } | null {
  if (!/^0x[0-9a-fA-F]{128}$/.test(data)) return null;
  return { reserve0: BigInt(`0x${data.slice(2, 66)}`), reserve1: BigInt(`0x${data.slice(66, 130)}`) };
}
