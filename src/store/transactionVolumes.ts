import { lt, sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { retryConflicts } from "./retryConflicts.ts";
import { protocolVolumeHours, tokenTransfers, transactions, transactionVolumes } from "./schema.ts";

/**
 * The volume side of the USD statistics (SPEC §7 `dailyVolume`, `last24h`; docs/prices.md): the
 * `transaction_volumes` rows the triggers of migration `usd_volume_triggers` keep for recent transactions,
 * valued here once each, and the per-hour sums `protocol_volume_hours` the triggers keep from them.
 */

const HOUR_MS = 3600 * 1000;

export type ValueQuery = {
  /** only transactions with a block time at or after this (the window's start) */
  since: Date;
  /** at most this many transactions in this statement */
  limit: number;
  /** every (protocol, address) pair that counts as the protocol's own (lowercase) */
  protocolAddresses: readonly { protocol: string; address: string }[];
  /** USD per raw unit (price / 10^decimals) of every priced tracked token; other tokens count 0 */
  usdPerUnit: readonly { token: string; usd: number }[];
  configHash: string;
  valuedAt: Date;
};

/**
 * Value up to `limit` pending transactions of the window, newest first, by the SPEC §7 rule, in one statement:
 * per transaction, the larger of the USD value of its transfers into the protocol's addresses and that of its
 * transfers out of them; when it has neither, the USD value of its largest transfer; no transfers, 0. A token
 * without a price counts 0 (a transfer of it into the protocol still makes a flow).
 *
 * Pending rows come from `transaction_volumes_pending_idx`, read backward up to the limit: the order is `desc`
 * (nulls first), the backward order of that ascending index. (`desc nulls last`, the same rows since the column
 * is never null, made every batch scan and sort all pending rows, quadratic over a backlog: on PostgreSQL 15,
 * reading a batch of 1,000 out of 20,000 pending rows took 10 ms instead of 0.4.) Each one's transfers come from
 * `token_transfers`' primary key (the transaction's block, from `transactions`, then its hash) inside a LATERAL
 * aggregate. A row valued meanwhile by another process is left as it is, so a volume is never counted twice.
 * Returns how many rows this call valued.
 *
 * Like every writer of `transaction_volumes` here, it runs again when PostgreSQL breaks a deadlock with an
 * ingest commit by aborting it: its trigger upserts the hour sums in key order, but a commit upserts them
 * once per inserted batch of transactions, so the two can each hold an hour row the other waits for.
 */
export async function valuePendingVolumes(db: Db, query: ValueQuery): Promise<number> {
  const v = transactionVolumes;
  const tt = tokenTransfers;
  const result = await retryConflicts(() =>
    db.execute<{ n: string }>(sql`
    with pa as (
      select distinct x.protocol, x.address
      from json_to_recordset(${JSON.stringify(query.protocolAddresses)}::json) as x(protocol text, address text)
    ), pr as (
      select x.token, x.usd from json_to_recordset(${JSON.stringify(query.usdPerUnit)}::json) as x(token text, usd float8)
    ), pending as (
      select ${v.txHash} as tx_hash, ${v.protocol} as protocol,
        (select ${transactions.blockNumber} from ${transactions} where ${transactions.hash} = ${v.txHash}) as block_number
      from ${v}
      where ${v.volumeUsd} is null and ${v.blockTimestamp} >= ${query.since.toISOString()}::timestamptz
      order by ${v.blockTimestamp} desc
      limit ${query.limit}
    ), valued as (
      select p.tx_hash, case when f.has_flow then greatest(f.in_usd, f.out_usd) else f.max_usd end as usd
      from pending p
      cross join lateral (
        select
          coalesce(sum(flow.usd) filter (where flow.inbound), 0) as in_usd,
          coalesce(sum(flow.usd) filter (where flow.outbound), 0) as out_usd,
          coalesce(bool_or(flow.inbound or flow.outbound), false) as has_flow,
          coalesce(max(flow.usd), 0) as max_usd
        from (
          select coalesce(pr.usd, 0) * ${tt.amount}::float8 as usd,
            exists (select 1 from pa where pa.protocol = p.protocol and pa.address = ${tt.toAddress}) as inbound,
            exists (select 1 from pa where pa.protocol = p.protocol and pa.address = ${tt.fromAddress}) as outbound
          from ${tt}
          left join pr on pr.token = ${tt.tokenAddress}
          where ${tt.blockNumber} = p.block_number and ${tt.txHash} = p.tx_hash
        ) flow
      ) f
      order by p.tx_hash
    ), updated as (
      update ${v} set volume_usd = valued.usd, config_hash = ${query.configHash},
        valued_at = ${query.valuedAt.toISOString()}::timestamptz
      from valued where ${v.txHash} = valued.tx_hash and ${v.volumeUsd} is null
      returning 1
    )
    select count(*) as n from updated`),
  );
  return Number(result.rows[0]?.n ?? 0);
}

/**
 * Put back to pending every valued row of the window valued under another configuration (protocol addresses
 * or tracked tokens changed): they are valued again with the new one. Returns how many.
 */
export async function resetVolumesOfOtherConfigs(db: Db, configHash: string, since: Date): Promise<number> {
  const v = transactionVolumes;
  const result = await retryConflicts(() =>
    db.execute<{ n: string }>(sql`
    with reset as (
      update ${v} set volume_usd = null, config_hash = null, valued_at = null
      where ${v.blockTimestamp} >= ${since.toISOString()}::timestamptz and ${v.volumeUsd} is not null
        and ${v.configHash} is distinct from ${configHash}
      returning 1
    ) select count(*) as n from reset`),
  );
  return Number(result.rows[0]?.n ?? 0);
}

/** Delete the rows (and hour sums) of transactions older than `before`: out of every future window. */
export async function pruneVolumes(db: Db, before: Date): Promise<void> {
  await retryConflicts(() =>
    db.delete(transactionVolumes).where(lt(transactionVolumes.blockTimestamp, before)),
  );
  await retryConflicts(() =>
    db
      .delete(protocolVolumeHours)
      .where(lt(protocolVolumeHours.hour, new Date(Math.floor(before.getTime() / HOUR_MS) * HOUR_MS))),
  );
}

export type WindowFigures = { transactions: number; volumeUsd: number };

/**
 * Each protocol's stored transactions with a block time at or after `since`, and the sum of their valued USD
 * volume: the hour sums from the first whole hour on (`protocol_volume_hours` primary key, at most 25 rows
 * per protocol), plus the rows of the partial hour before it (`transaction_volumes_timestamp_idx`).
 */
export async function getWindowFigures(db: Db, since: Date): Promise<Map<string, WindowFigures>> {
  const firstHour = new Date(Math.ceil(since.getTime() / HOUR_MS) * HOUR_MS);
  const h = protocolVolumeHours;
  const v = transactionVolumes;
  const result = await db.execute<{ protocol: string; n: string; usd: string | number | null }>(sql`
    select protocol, sum(n) as n, sum(usd) as usd from (
      select ${h.protocol} as protocol, ${h.transactions} as n, ${h.volumeUsd} as usd from ${h}
      where ${h.hour} >= ${firstHour.toISOString()}::timestamptz
      union all
      select ${v.protocol}, 1, coalesce(${v.volumeUsd}::numeric, 0) from ${v}
      where ${v.blockTimestamp} >= ${since.toISOString()}::timestamptz
        and ${v.blockTimestamp} < ${firstHour.toISOString()}::timestamptz
    ) w group by protocol`);
  return new Map(
    result.rows.map((row) => [
      row.protocol,
      { transactions: Number(row.n), volumeUsd: Number(row.usd ?? 0) },
    ]),
  );
}
