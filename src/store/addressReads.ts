import { and, eq, gt, type SQL, sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { newestFirst } from "./ordering.ts";
import type { TransactionPosition } from "./protocolReads.ts";
import { addressStats, addressTransactions, tokenBalances, transactions } from "./schema.ts";
import { summaryFields, type TransactionSummary, toSummary } from "./transactionSummaries.ts";

/** Reads behind the address view and its transaction list (SPEC §4 rows 13 and 14). */

export type AddressTransactionsQuery = {
  limit: number;
  /** rows to skip (offset paging); 0 with `before` */
  offset: number;
  /** keyset paging: only transactions strictly older than this position */
  before?: TransactionPosition | undefined;
  /** only transactions attributed to this protocol */
  protocol?: string | undefined;
};

/**
 * A page of the stored transactions an address (lowercase) takes part in, as sender, recipient, created
 * contract or party of a tracked-token transfer, newest first, as the API shows them, in one statement.
 * The page is cut from `address_transactions` (`address_transactions_address_block_idx`, or
 * `address_transactions_address_protocol_block_idx` with `protocol`), then its rows are read by hash.
 */
export async function getAddressTransactions(
  db: Db,
  address: string,
  query: AddressTransactionsQuery,
): Promise<TransactionSummary[]> {
  const a = addressTransactions;
  const filters: SQL[] = [eq(a.address, address.toLowerCase())];
  if (query.protocol !== undefined) filters.push(eq(a.protocol, query.protocol));
  if (query.before) {
    filters.push(
      sql`(${a.blockNumber}, ${a.transactionIndex}) < (${query.before.blockNumber}, ${query.before.transactionIndex})`,
    );
  }
  const page = db
    .select({ txHash: a.txHash, blockNumber: a.blockNumber, transactionIndex: a.transactionIndex })
    .from(a)
    .where(and(...filters))
    .orderBy(...newestFirst(a.blockNumber, a.transactionIndex))
    .limit(query.limit)
    .offset(query.offset)
    .as("page");
  const rows = await db
    .select(summaryFields())
    .from(page)
    .innerJoin(transactions, eq(transactions.hash, page.txHash))
    .orderBy(...newestFirst(page.blockNumber, page.transactionIndex));
  return rows.map(toSummary);
}

/** How many stored transactions an address (lowercase) takes part in (one primary-key read). */
export async function getAddressTransactionCount(db: Db, address: string): Promise<number> {
  const [row] = await db
    .select({ n: addressStats.transactionCount })
    .from(addressStats)
    .where(eq(addressStats.address, address.toLowerCase()));
  return row?.n ?? 0;
}

export type HeldToken = { tokenAddress: string; balance: bigint };

/**
 * The cached non-zero balances of tracked tokens an address (lowercase) holds (`token_balances_holder_idx`).
 * Each equals `balanceOf(holder)` at the last indexed block (SPEC §2).
 */
export async function getHeldTokens(db: Db, holder: string): Promise<HeldToken[]> {
  return db
    .select({ tokenAddress: tokenBalances.tokenAddress, balance: tokenBalances.balance })
    .from(tokenBalances)
    .where(and(eq(tokenBalances.holder, holder.toLowerCase()), gt(tokenBalances.balance, 0n)))
    .orderBy(tokenBalances.tokenAddress);
}
