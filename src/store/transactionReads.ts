import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import { groupBy } from "../internal/groupBy.ts";
import type { Db } from "./createDatabase.ts";
import { newestFirst } from "./ordering.ts";
import { logs, tokenTransfers, transactions } from "./schema.ts";
import { summaryFields, type TransactionSummary, toSummary } from "./transactionSummaries.ts";

export type TransactionRow = typeof transactions.$inferSelect;
export type LogRow = typeof logs.$inferSelect;
export type TransferRow = typeof tokenTransfers.$inferSelect;
export type TransactionDetails = { tx: TransactionRow; logs: LogRow[]; transfers: TransferRow[] };

/**
 * Stored transactions with their logs and transfers, in the order of `rows` (three indexed queries: logs and
 * transfers are keyed by block, so they are read by the transactions' blocks, then their hashes).
 */
export async function withDetails(db: Db, rows: readonly TransactionRow[]): Promise<TransactionDetails[]> {
  if (rows.length === 0) return [];
  const hashes = rows.map((r) => r.hash);
  const blockNumbers = [...new Set(rows.map((r) => r.blockNumber))];
  const [logRows, transferRows] = await Promise.all([
    db
      .select()
      .from(logs)
      .where(and(inArray(logs.blockNumber, blockNumbers), inArray(logs.txHash, hashes))),
    db
      .select()
      .from(tokenTransfers)
      .where(and(inArray(tokenTransfers.blockNumber, blockNumbers), inArray(tokenTransfers.txHash, hashes))),
  ]);
  const logsOf = groupBy(logRows, (l) => l.txHash);
  const transfersOf = groupBy(transferRows, (t) => t.txHash);
  return rows.map((tx) => ({
    tx,
    logs: logsOf.get(tx.hash) ?? [],
    transfers: transfersOf.get(tx.hash) ?? [],
  }));
}

/** One stored transaction by hash (lowercase), with details; null when not stored. */
export async function getTransaction(db: Db, hash: string): Promise<TransactionDetails | null> {
  const rows = await db.select().from(transactions).where(eq(transactions.hash, hash.toLowerCase()));
  const [details] = await withDetails(db, rows);
  return details ?? null;
}

/**
 * Newest stored transactions (block number, then index, descending), optionally filtered, as the API shows
 * them, in one statement (no offset: the events and transfers subqueries run for the `limit` rows only).
 */
export async function getRecentTransactions(
  db: Db,
  options: { limit: number; protocol?: string | undefined; actionType?: string | undefined },
): Promise<TransactionSummary[]> {
  const filters: SQL[] = [];
  if (options.protocol) filters.push(eq(transactions.protocol, options.protocol));
  if (options.actionType) filters.push(eq(transactions.actionType, options.actionType));
  const rows = await db
    .select(summaryFields())
    .from(transactions)
    .where(filters.length > 0 ? and(...filters) : undefined)
    // `desc nulls last`, as the index is built: a plain `desc` would not use transactions_block_idx.
    .orderBy(...newestFirst(transactions.blockNumber, transactions.transactionIndex))
    .limit(options.limit);
  return rows.map(toSummary);
}

/** Totals for the stats endpoints. */
export async function getTotals(db: Db): Promise<{ transactions: number; tokenTransfers: number }> {
  const result = await db.execute<{ transactions: string; transfers: string }>(
    sql`select (select count(*) from ${transactions}) as transactions, (select count(*) from ${tokenTransfers}) as transfers`,
  );
  const row = result.rows[0];
  return { transactions: Number(row?.transactions ?? 0), tokenTransfers: Number(row?.transfers ?? 0) };
}
