import { eq, gte, sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { protocolStats, statCounters, tokenStats, transactions } from "./schema.ts";

/**
 * Reads behind the protocol stats, the overview and the global stats (SPEC §4 rows 8, 10, 11; §7). Totals
 * come from counters the database keeps in step with the rows they count (`protocol_stats`, `token_stats`,
 * `stat_counters`, see docs/performance.md), never from a count over a big table.
 */

export type ProtocolCounts = {
  protocol: string;
  transactionCount: number;
  uniqueUsers: number;
  /** when a transaction of the protocol was last stored or removed; null before the first */
  updatedAt: Date | null;
};

/** Stored transactions and distinct senders of one protocol, all time (one primary-key read). */
export async function getProtocolCounts(db: Db, protocol: string): Promise<ProtocolCounts> {
  const [row] = await db.select().from(protocolStats).where(eq(protocolStats.protocol, protocol));
  return row ?? { protocol, transactionCount: 0, uniqueUsers: 0, updatedAt: null };
}

/** The counts of every protocol that has stored transactions, keyed by protocol id (one row per protocol). */
export async function getAllProtocolCounts(db: Db): Promise<Map<string, ProtocolCounts>> {
  const rows = await db.select().from(protocolStats);
  return new Map(rows.map((row) => [row.protocol, row]));
}

export type GlobalCounts = {
  /** stored transactions */
  transactions: number;
  /** stored transfers of tracked tokens */
  tokenTransfers: number;
  /** distinct addresses taking part in stored transactions (senders, recipients, transfer parties) */
  addresses: number;
};

/** Global totals from the maintained counters: sums over one row per protocol and per token, one key read. */
export async function getGlobalCounts(db: Db): Promise<GlobalCounts> {
  const result = await db.execute<{
    transactions: string | null;
    transfers: string | null;
    addresses: string | null;
  }>(
    sql`select
      (select sum(${protocolStats.transactionCount}) from ${protocolStats}) as transactions,
      (select sum(${tokenStats.transfersCount}) from ${tokenStats}) as transfers,
      (select ${statCounters.value} from ${statCounters} where ${statCounters.name} = 'addresses') as addresses`,
  );
  const row = result.rows[0];
  return {
    transactions: Number(row?.transactions ?? 0),
    tokenTransfers: Number(row?.transfers ?? 0),
    addresses: Number(row?.addresses ?? 0),
  };
}

/**
 * Stored transactions whose block timestamp is at or after `since` (the trailing-24-hours figure): a range
 * count over `transactions_timestamp_idx`, proportional to the window, so callers cache it for a few seconds.
 */
export async function countTransactionsSince(db: Db, since: Date): Promise<number> {
  const [row] = await db
    .select({ n: sql<string>`count(*)` })
    .from(transactions)
    .where(gte(transactions.blockTimestamp, since));
  return Number(row?.n ?? 0);
}
