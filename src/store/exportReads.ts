import { type AnyColumn, and, asc, eq, gt, gte, lte, type SQL, sql } from "drizzle-orm";
import { union } from "drizzle-orm/pg-core";
import type { Db } from "./createDatabase.ts";
import { addressTransactions, tokenBalances, tokenTransfers, transactions } from "./schema.ts";

/**
 * Reads behind the CSV exports (SPEC §10.4): oldest first, in pages cut by keyset from the same indexes the
 * newest-first lists use (scanned backward: `asc nulls first` is the backward order of `desc nulls last`), and
 * capped counts that tell whether a file would exceed its row limit before a row is sent.
 */

export type BlockBounds = { fromBlock?: number | undefined; toBlock?: number | undefined };

const oldestFirst = (block: AnyColumn, index: AnyColumn) => [
  sql`${block} asc nulls first`,
  sql`${index} asc nulls first`,
];

/**
 * The blocks whose stored transactions have a block time in `[from, to]` (either open): block times never
 * decrease along the chain, so a time range is a block range. From `transactions_timestamp_idx`: the first
 * stored transaction at or after `from` and the last at or before `to`. Null when no stored block is in it.
 */
export async function blockBoundsOfTimes(db: Db, from?: Date, to?: Date): Promise<BlockBounds | null> {
  const t = transactions;
  const bounds: BlockBounds = {};
  if (from) {
    const [row] = await db
      .select({ n: t.blockNumber })
      .from(t)
      .where(gte(t.blockTimestamp, from))
      .orderBy(asc(t.blockTimestamp))
      .limit(1);
    if (!row) return null;
    bounds.fromBlock = row.n;
  }
  if (to) {
    const [row] = await db
      .select({ n: t.blockNumber })
      .from(t)
      .where(lte(t.blockTimestamp, to))
      .orderBy(sql`${t.blockTimestamp} desc`)
      .limit(1);
    if (!row) return null;
    bounds.toBlock = row.n;
  }
  if (bounds.fromBlock !== undefined && bounds.toBlock !== undefined && bounds.fromBlock > bounds.toBlock)
    return null;
  return bounds;
}

function blockFilters(column: AnyColumn, bounds: BlockBounds): SQL[] {
  const filters: SQL[] = [];
  if (bounds.fromBlock !== undefined) filters.push(gte(column, bounds.fromBlock));
  if (bounds.toBlock !== undefined) filters.push(lte(column, bounds.toBlock));
  return filters;
}

/** How many rows a select would give, counting at most `cap` of them. */
async function cappedCount(db: Db, query: SQL, cap: number): Promise<number> {
  const result = await db.execute<{ n: string | number }>(
    sql`select count(*) as n from (select 1 from (${query}) q limit ${cap}) capped`,
  );
  return Number(result.rows[0]?.n ?? 0);
}

export type AddressTransactionsExport = BlockBounds & { address: string; protocol?: string | undefined };
export type TransactionPosition = { blockNumber: number; transactionIndex: number };
export type ExportTransaction = typeof transactions.$inferSelect;

function addressTransactionFilters(query: AddressTransactionsExport, after?: TransactionPosition): SQL[] {
  const a = addressTransactions;
  const filters: SQL[] = [eq(a.address, query.address), ...blockFilters(a.blockNumber, query)];
  if (query.protocol !== undefined) filters.push(eq(a.protocol, query.protocol));
  if (after) {
    filters.push(
      sql`(${a.blockNumber}, ${a.transactionIndex}) > (${after.blockNumber}, ${after.transactionIndex})`,
    );
  }
  return filters;
}

/** How many transactions the address takes part in within the bounds, up to `cap`. */
export async function countAddressTransactionsExport(
  db: Db,
  query: AddressTransactionsExport,
  cap: number,
): Promise<number> {
  const a = addressTransactions;
  return cappedCount(db, sql`select 1 from ${a} where ${and(...addressTransactionFilters(query))}`, cap);
}

/**
 * The next `limit` transactions the address (lowercase) takes part in after `after`, oldest first: cut from
 * `address_transactions_address_block_idx` (or its protocol variant), then read by hash.
 */
export async function getAddressTransactionsExport(
  db: Db,
  query: AddressTransactionsExport,
  page: { after?: TransactionPosition | undefined; limit: number },
): Promise<ExportTransaction[]> {
  const a = addressTransactions;
  const cut = db
    .select({ txHash: a.txHash, blockNumber: a.blockNumber, transactionIndex: a.transactionIndex })
    .from(a)
    .where(and(...addressTransactionFilters(query, page.after)))
    .orderBy(...oldestFirst(a.blockNumber, a.transactionIndex))
    .limit(page.limit)
    .as("cut");
  const rows = await db
    .select({ tx: transactions })
    .from(cut)
    .innerJoin(transactions, eq(transactions.hash, cut.txHash))
    .orderBy(asc(cut.blockNumber), asc(cut.transactionIndex));
  return rows.map((r) => r.tx);
}

export type ExportTransfer = typeof tokenTransfers.$inferSelect;

/** The tracked-token transfers of these transactions (by block and hash, the primary key). */
export async function getTransfersOfTransactions(
  db: Db,
  txs: readonly { hash: string; blockNumber: number }[],
): Promise<ExportTransfer[]> {
  if (txs.length === 0) return [];
  const tt = tokenTransfers;
  return db
    .select()
    .from(tt)
    .where(
      sql`(${tt.blockNumber}, ${tt.txHash}) in (select * from unnest(${sql.param(txs.map((t) => t.blockNumber))}::int8[], ${sql.param(txs.map((t) => t.hash))}::text[]))`,
    )
    .orderBy(asc(tt.blockNumber), asc(tt.logIndex));
}

export type TransfersExport = BlockBounds & {
  /** the tokens whose transfers are listed (lowercase) */
  tokens: readonly string[];
  /** only transfers from or to this address (lowercase) */
  party?: string | undefined;
};
export type TransferPosition = { blockNumber: number; logIndex: number };

/**
 * One select per token and side (`token_transfers_token_block_idx`, or with a party
 * `token_transfers_token_from_block_idx` and `…_to_block_idx`), each oldest first after `after` and cut at
 * `limit`, merged by UNION (a self-transfer is found by both sides once).
 */
function transferSelects(query: TransfersExport, after: TransferPosition | undefined, limit: number) {
  const tt = tokenTransfers;
  const base = (token: string): SQL[] => {
    const filters: SQL[] = [eq(tt.tokenAddress, token), ...blockFilters(tt.blockNumber, query)];
    if (after)
      filters.push(sql`(${tt.blockNumber}, ${tt.logIndex}) > (${after.blockNumber}, ${after.logIndex})`);
    return filters;
  };
  return query.tokens.flatMap((token) => {
    const sides = query.party === undefined ? [undefined] : [tt.fromAddress, tt.toAddress];
    return sides.map((side) => {
      const filters = base(token);
      if (side && query.party !== undefined) filters.push(eq(side, query.party));
      return {
        token,
        select: (db: Db) =>
          db
            .select()
            .from(tt)
            .where(and(...filters))
            .orderBy(...oldestFirst(tt.blockNumber, tt.logIndex))
            .limit(limit),
      };
    });
  });
}

/** How many transfers an export would list, up to `cap`. */
export async function countTransfersExport(db: Db, query: TransfersExport, cap: number): Promise<number> {
  const selects = transferSelects(query, undefined, cap).map((s) => s.select(db));
  const [first, ...rest] = selects;
  if (!first) return 0;
  const merged = rest.length === 0 ? first : union(first, ...(rest as [typeof first]));
  return cappedCount(db, sql`${merged}`, cap);
}

/** The next `limit` transfers of an export after `after`, oldest first (block number, then log index). */
export async function getTransfersExport(
  db: Db,
  query: TransfersExport,
  page: { after?: TransferPosition | undefined; limit: number },
): Promise<ExportTransfer[]> {
  const selects = transferSelects(query, page.after, page.limit).map((s) => s.select(db));
  const [first, ...rest] = selects;
  if (!first) return [];
  if (rest.length === 0) return first;
  const rows = await union(first, ...(rest as [typeof first]));
  return rows.sort((x, y) => x.blockNumber - y.blockNumber || x.logIndex - y.logIndex).slice(0, page.limit);
}

export type HolderPosition = { balance: bigint; holder: string };

/** How many holders with a balance above zero, up to `cap`. */
export async function countHoldersExport(db: Db, token: string, cap: number): Promise<number> {
  const b = tokenBalances;
  return cappedCount(
    db,
    sql`select 1 from ${b} where ${b.tokenAddress} = ${token} and ${b.balance} > 0`,
    cap,
  );
}

/**
 * The next `limit` holders of a token after `after`, by balance descending then address, zero balances
 * excluded: `token_balances_token_balance_idx`, the order of the holders list.
 */
export async function getHoldersExport(
  db: Db,
  token: string,
  page: { after?: HolderPosition | undefined; limit: number },
): Promise<HolderPosition[]> {
  const b = tokenBalances;
  const filters: SQL[] = [eq(b.tokenAddress, token), gt(b.balance, 0n)];
  if (page.after) {
    filters.push(
      sql`(${b.balance} < ${page.after.balance.toString()}::numeric or (${b.balance} = ${page.after.balance.toString()}::numeric and ${b.holder} > ${page.after.holder}))`,
    );
  }
  return db
    .select({ balance: b.balance, holder: b.holder })
    .from(b)
    .where(and(...filters))
    .orderBy(sql`${b.balance} desc nulls last`, asc(b.holder))
    .limit(page.limit);
}
