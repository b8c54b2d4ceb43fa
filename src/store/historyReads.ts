import { sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import {
  historyBuckets,
  historyHolderHours,
  historyVolumes,
  tokenTransfers,
  transactions,
} from "./schema.ts";

/**
 * Reads behind protocol and global history (SPEC §10.3, docs/api.md "History"): the roll-ups the triggers of
 * migration `history_rollups` keep (`history_buckets`, `history_holder_hours`), the cached bucket volumes
 * (`history_volumes`), and the transfers a stale volume is computed from.
 */

export type HistorySpan = "hour" | "day";

/** The protocol key of the all-protocols roll-ups. */
export const ALL_PROTOCOLS = "";

export type HistoryBucketRow = {
  bucket: Date;
  transactionCount: number;
  uniqueUsers: number;
  /** the bucket's current revision: a volume computed from data read after it may be cached under it */
  revision: number;
  /** the cached volume, when it was computed at the current revision under `configHash`; else null */
  volumeUsd: number | null;
};

/**
 * The stored buckets of one span and protocol (`ALL_PROTOCOLS` for all) whose start is in `[first, last]`,
 * ascending, each with its cached volume when still valid: one range of `history_buckets_pk` joined to
 * `history_volumes_pk`. Buckets without a row are empty.
 */
export async function getHistoryBuckets(
  db: Db,
  query: { span: HistorySpan; protocol: string; first: Date; last: Date; configHash: string },
): Promise<HistoryBucketRow[]> {
  const b = historyBuckets;
  const v = historyVolumes;
  const result = await db.execute<{
    bucket: string | Date;
    transaction_count: string | number;
    unique_users: string | number;
    revision: string | number;
    volume_usd: number | string | null;
  }>(sql`
    select ${b.bucket} as bucket, ${b.transactionCount} as transaction_count, ${b.uniqueUsers} as unique_users,
      ${b.revision} as revision, ${v.volumeUsd} as volume_usd
    from ${b}
    left join ${v} on ${v.span} = ${b.span} and ${v.protocol} = ${b.protocol} and ${v.bucket} = ${b.bucket}
      and ${v.revision} = ${b.revision} and ${v.configHash} = ${query.configHash}
    where ${b.span} = ${query.span} and ${b.protocol} = ${query.protocol}
      and ${b.bucket} >= ${query.first.toISOString()}::timestamptz
      and ${b.bucket} <= ${query.last.toISOString()}::timestamptz
    order by ${b.bucket}`);
  return result.rows.map((row) => ({
    bucket: new Date(row.bucket),
    transactionCount: Number(row.transaction_count),
    uniqueUsers: Number(row.unique_users),
    revision: Number(row.revision),
    volumeUsd: row.volume_usd === null ? null : Number(row.volume_usd),
  }));
}

/**
 * Buckets with transactions whose volume has no valid cached value (none, or one computed at an older revision
 * or under another configuration), newest first, at most `limit`, of those starting before `before`: what the
 * writer's background valuation computes before anyone asks (stats/createTimeSeries.ts `valueStale`).
 */
export async function getStaleBuckets(
  db: Db,
  query: { configHash: string; before: { hour: Date; day: Date }; limit: number },
): Promise<{ span: HistorySpan; protocol: string; bucket: Date }[]> {
  const b = historyBuckets;
  const v = historyVolumes;
  const result = await db.execute<{ span: HistorySpan; protocol: string; bucket: string | Date }>(sql`
    select ${b.span} as span, ${b.protocol} as protocol, ${b.bucket} as bucket
    from ${b}
    left join ${v} on ${v.span} = ${b.span} and ${v.protocol} = ${b.protocol} and ${v.bucket} = ${b.bucket}
      and ${v.revision} = ${b.revision} and ${v.configHash} = ${query.configHash}
    where ${v.span} is null and ${b.transactionCount} > 0
      and ((${b.span} = 'hour' and ${b.bucket} < ${query.before.hour.toISOString()}::timestamptz)
        or (${b.span} = 'day' and ${b.bucket} < ${query.before.day.toISOString()}::timestamptz))
    order by ${b.bucket} desc
    limit ${query.limit}`);
  return result.rows.map((row) => ({ span: row.span, protocol: row.protocol, bucket: new Date(row.bucket) }));
}

export type VolumeTransfer = {
  txHash: string;
  protocol: string;
  blockNumber: number;
  blockTimestamp: Date;
  logIndex: number;
  token: string;
  from: string;
  to: string;
  amount: bigint;
};

/**
 * The token transfers of the stored transactions of `protocol` (null: every protocol) whose block time is in
 * `[since, until)`, by transaction (ordered by hash, then log index): what their `valueUsd` (SPEC §10.2) is
 * computed from. Transactions from `transactions_timestamp_idx`; their transfers from one range of
 * `token_transfers`' primary key (the blocks between the first and the last of those transactions), hash-joined:
 * joined without that range, the planner scanned the whole table once per call.
 *
 * The rows come back as one text value (a line per transfer, comma-separated fields that never hold a comma:
 * hashes, addresses, identifiers, integers) parsed here: on PGlite, handing over tens of thousands of
 * eight-column rows cost about four times as much as the same data as one string, and far more than the
 * statement itself.
 */
export async function getVolumeTransfers(
  db: Db,
  query: { protocol: string | null; since: Date; until: Date },
): Promise<VolumeTransfer[]> {
  const t = transactions;
  const tt = tokenTransfers;
  const result = await db.execute<{ lines: string | null }>(sql`
    with tx as materialized (
      select ${t.hash} as hash, ${t.protocol} as protocol, ${t.blockNumber} as block_number,
        ${t.blockTimestamp} as block_timestamp
      from ${t}
      where ${t.blockTimestamp} >= ${query.since.toISOString()}::timestamptz
        and ${t.blockTimestamp} < ${query.until.toISOString()}::timestamptz
        ${query.protocol === null ? sql`` : sql`and ${t.protocol} = ${query.protocol}`}
    )
    select string_agg(concat_ws(',', tx.hash, tx.protocol, tx.block_number,
        (extract(epoch from tx.block_timestamp) * 1000)::bigint, ${tt.logIndex}, ${tt.tokenAddress},
        ${tt.fromAddress}, ${tt.toAddress}, ${tt.amount}::text), e'\n' order by tx.hash, ${tt.logIndex}) as lines
    from tx
    join ${tt} on ${tt.blockNumber} = tx.block_number and ${tt.txHash} = tx.hash
    where ${tt.blockNumber} >= (select min(block_number) from tx)
      and ${tt.blockNumber} <= (select max(block_number) from tx)`);
  const lines = result.rows[0]?.lines;
  if (!lines) return [];
  return lines.split("\n").map((line) => {
    const [txHash, protocol, blockNumber, time, logIndex, token, from, to, amount] = line.split(",");
    return {
      txHash: txHash!,
      protocol: protocol!,
      blockNumber: Number(blockNumber),
      blockTimestamp: new Date(Number(time)),
      logIndex: Number(logIndex),
      token: token!,
      from: from!,
      to: to!,
      amount: BigInt(amount!),
    };
  });
}

/**
 * Cache computed bucket volumes under the revision read before their transfers were: a later change has given
 * the bucket another revision, so a value computed from older data is never served as current.
 */
export async function saveHistoryVolumes(
  db: Db,
  query: {
    span: HistorySpan;
    protocol: string;
    configHash: string;
    volumes: readonly { bucket: Date; revision: number; volumeUsd: number }[];
  },
): Promise<void> {
  if (query.volumes.length === 0) return;
  const v = historyVolumes;
  const rows = query.volumes.map((x) => ({ b: x.bucket.toISOString(), r: x.revision, u: x.volumeUsd }));
  await db.execute(sql`
    insert into ${v} (span, protocol, bucket, revision, config_hash, volume_usd)
      select ${query.span}, ${query.protocol}, x.b, x.r, ${query.configHash}, x.u
      from json_to_recordset(${JSON.stringify(rows)}::json) as x(b timestamptz, r bigint, u float8)
      order by x.b
    on conflict (span, protocol, bucket) do update
      set revision = excluded.revision, config_hash = excluded.config_hash, volume_usd = excluded.volume_usd`);
}

export type HolderHours = {
  /** per token, the net amount moved into the holders before `since` */
  before: Map<string, bigint>;
  /** per token and hour in `[since, until)`, ascending by hour, the net amount moved into the holders */
  hours: { token: string; hour: Date; delta: bigint }[];
};

/**
 * The followed holders' net transfers per token and hour (`history_holder_hours`): everything before `since`
 * summed per token, and each hour of `[since, until)`; summed up to a time, the holders' balance then.
 */
export async function getHolderHours(
  db: Db,
  query: { holders: readonly string[]; tokens: readonly string[]; since: Date; until: Date },
): Promise<HolderHours> {
  const h = historyHolderHours;
  const empty: HolderHours = { before: new Map(), hours: [] };
  if (query.holders.length === 0 || query.tokens.length === 0) return empty;
  const scope = sql`${h.holder} = any(${sql.param([...query.holders])}::text[])
    and ${h.tokenAddress} = any(${sql.param([...query.tokens])}::text[])`;
  const result = await db.execute<{ token: string; hour: string | Date | null; delta: string }>(sql`
    select ${h.tokenAddress} as token, null::timestamptz as hour, sum(${h.delta})::text as delta from ${h}
    where ${scope} and ${h.hour} < ${query.since.toISOString()}::timestamptz
    group by ${h.tokenAddress}
    union all
    select ${h.tokenAddress}, ${h.hour}, sum(${h.delta})::text from ${h}
    where ${scope} and ${h.hour} >= ${query.since.toISOString()}::timestamptz
      and ${h.hour} < ${query.until.toISOString()}::timestamptz
    group by ${h.tokenAddress}, ${h.hour}
    order by 2 nulls first`);
  for (const row of result.rows) {
    if (row.hour === null) empty.before.set(row.token, BigInt(row.delta));
    else empty.hours.push({ token: row.token, hour: new Date(row.hour), delta: BigInt(row.delta) });
  }
  return empty;
}

/**
 * Give every bucket that ends after `since` a new revision, so that its cached volume is computed again: for
 * a writer of price history, whose change at `since` may move the price of any later transfer.
 */
export async function invalidateHistoryVolumes(db: Db, since: Date): Promise<void> {
  await db.execute(sql`select history_invalidate_volumes(${since.toISOString()}::timestamptz)`);
}
