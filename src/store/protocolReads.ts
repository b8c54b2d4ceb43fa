import { and, eq, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Db } from "./createDatabase.ts";
import { newestFirst } from "./ordering.ts";
import { transactions } from "./schema.ts";
import { summaryFields, type TransactionSummary, toSummary } from "./transactionSummaries.ts";

/** A position in a newest-first transaction list: items strictly older than it come next. */
export type TransactionPosition = { blockNumber: number; transactionIndex: number };

export type ProtocolTransactionsQuery = {
  limit: number;
  /** rows to skip (offset paging); 0 with `before` */
  offset: number;
  /** keyset paging: only transactions strictly older than this position */
  before?: TransactionPosition | undefined;
  actionType?: string | undefined;
};

/**
 * A page of one protocol's stored transactions, newest first (block number, then transaction index, both
 * descending: a total order, so keyset positions are exact), as the API shows them, in one statement. The
 * page is one range scan of `transactions_protocol_block_idx`, or `transactions_protocol_action_block_idx`
 * with `actionType`; a keyset position is a seek into it, so deep pages cost what the first does.
 */
export async function getProtocolTransactions(
  db: Db,
  protocol: string,
  query: ProtocolTransactionsQuery,
): Promise<TransactionSummary[]> {
  const t = alias(transactions, "listed");
  const filters: SQL[] = [eq(t.protocol, protocol)];
  if (query.actionType !== undefined) filters.push(eq(t.actionType, query.actionType));
  if (query.before) {
    filters.push(
      sql`(${t.blockNumber}, ${t.transactionIndex}) < (${query.before.blockNumber}, ${query.before.transactionIndex})`,
    );
  }
  const page = db
    .select({ hash: t.hash, blockNumber: t.blockNumber, transactionIndex: t.transactionIndex })
    .from(t)
    .where(and(...filters))
    .orderBy(...newestFirst(t.blockNumber, t.transactionIndex))
    .limit(query.limit)
    .offset(query.offset)
    .as("page");
  const rows = await db
    .select(summaryFields())
    .from(page)
    .innerJoin(transactions, eq(transactions.hash, page.hash))
    .orderBy(...newestFirst(page.blockNumber, page.transactionIndex));
  return rows.map(toSummary);
}
