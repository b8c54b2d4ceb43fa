import { and, eq, gte, lte, type SQL, sql } from "drizzle-orm";
import { union } from "drizzle-orm/pg-core";
import type { Db } from "./createDatabase.ts";
import { prices, tokenBalances, tokenStats, tokenTransfers } from "./schema.ts";

/**
 * Reads behind the token endpoints (SPEC §4 rows 2-4). Every query here is answered from an index or a
 * maintained counter named in docs/performance.md ("API indexes"); none scans a token's whole history.
 *
 * Orderings spell `DESC NULLS LAST` because that is how the indexes are built (Drizzle's `.desc()`), and
 * PostgreSQL only walks an index for an ORDER BY whose NULLS placement matches, NOT NULL columns included:
 * a bare `DESC` (NULLS FIRST) would sort the whole token instead.
 */
const newestFirst = [
  sql`${tokenTransfers.blockNumber} desc nulls last`,
  sql`${tokenTransfers.logIndex} desc nulls last`,
];
/** The same order over a UNION's output columns (unqualified names). */
const newestFirstOfUnion = [sql`"block_number" desc nulls last`, sql`"log_index" desc nulls last`];

export type TokenCounts = { holdersCount: number; transfersCount: number };

/**
 * Holders with a balance above zero and stored Transfer events of one token (lowercase address), from the
 * `token_stats` counters the database keeps in step with `token_balances` and `token_transfers`.
 */
export async function getTokenCounts(db: Db, token: string): Promise<TokenCounts> {
  const [row] = await db
    .select({ holdersCount: tokenStats.holdersCount, transfersCount: tokenStats.transfersCount })
    .from(tokenStats)
    .where(eq(tokenStats.tokenAddress, token.toLowerCase()));
  return row ?? { holdersCount: 0, transfersCount: 0 };
}

export type StoredPrice = { priceUsd: number; source: string; priceAt: Date };

/** The latest price the price engine stored for a token (SPEC §6), or null when it has none yet. */
export async function getTokenPrice(db: Db, token: string): Promise<StoredPrice | null> {
  const [row] = await db
    .select({ priceUsd: prices.priceUsd, source: prices.source, priceAt: prices.priceAt })
    .from(prices)
    .where(eq(prices.tokenAddress, token.toLowerCase()));
  return row ?? null;
}

export type HolderRow = { holder: string; balance: bigint };

/**
 * One page of a token's holders, largest balance first, ties by address ascending (a total order, so pages
 * never overlap), zero balances excluded. Walks `token_balances_token_balance_idx` (partial, balance > 0).
 */
export async function getTopHolders(
  db: Db,
  token: string,
  page: { limit: number; offset: number },
): Promise<HolderRow[]> {
  return (
    db
      .select({ holder: tokenBalances.holder, balance: tokenBalances.balance })
      .from(tokenBalances)
      // `balance > 0` as a literal: the partial index's predicate, provable at any plan time.
      .where(and(eq(tokenBalances.tokenAddress, token.toLowerCase()), sql`${tokenBalances.balance} > 0`))
      .orderBy(sql`${tokenBalances.balance} desc nulls last`, tokenBalances.holder)
      .limit(page.limit)
      .offset(page.offset)
  );
}

export type HoldersPage = { total: number; holders: HolderRow[] };

/**
 * `getTopHolders` with the holder count of `getTokenCounts`, in one statement for any page that has rows:
 * the counter (`token_stats` primary key) is a scalar subquery, evaluated once (an
 * InitPlan), beside the page walked in `token_balances_token_balance_idx` order. A page past the end has no
 * row to carry it, so only then is the counter read on its own.
 */
export async function getHoldersPage(
  db: Db,
  token: string,
  page: { limit: number; offset: number },
): Promise<HoldersPage> {
  const address = token.toLowerCase();
  const total = db
    .select({ n: tokenStats.holdersCount })
    .from(tokenStats)
    .where(eq(tokenStats.tokenAddress, address));
  const rows = await db
    .select({
      holder: tokenBalances.holder,
      balance: tokenBalances.balance,
      total: sql<number>`(${total})`.mapWith(Number),
    })
    .from(tokenBalances)
    .where(and(eq(tokenBalances.tokenAddress, address), sql`${tokenBalances.balance} > 0`))
    .orderBy(sql`${tokenBalances.balance} desc nulls last`, tokenBalances.holder)
    .limit(page.limit)
    .offset(page.offset);
  const first = rows[0];
  if (!first) {
    return { total: page.offset === 0 ? 0 : (await getTokenCounts(db, address)).holdersCount, holders: [] };
  }
  return { total: first.total, holders: rows.map((r) => ({ holder: r.holder, balance: r.balance })) };
}

export type TransferRow = typeof tokenTransfers.$inferSelect;

export type TokenTransfersQuery = {
  limit: number;
  /** rows to skip (offset paging); use 0 with `before` */
  offset: number;
  /** keyset paging: only transfers strictly older than this position */
  before?: { blockNumber: number; logIndex: number } | undefined;
  /** only transfers where this address (lowercase) is the sender or the receiver */
  party?: string | undefined;
  fromBlock?: number | undefined;
  toBlock?: number | undefined;
};

/**
 * A page of a token's stored Transfer events, newest first (block number, then log index, both descending;
 * log indexes are unique within a block, so the order is total and keyset positions are exact).
 *
 * Without `party` it is one range scan of `token_transfers_token_block_idx`. With `party` it is the UNION
 * of two scans, `token_transfers_token_from_block_idx` and `token_transfers_token_to_block_idx`, each
 * stopping after `offset + limit` rows, merged and cut: a busy address costs one page, not its history.
 */
export async function getTokenTransfers(
  db: Db,
  token: string,
  query: TokenTransfersQuery,
): Promise<TransferRow[]> {
  const t = tokenTransfers;
  const common: SQL[] = [eq(t.tokenAddress, token.toLowerCase())];
  if (query.before) {
    // A row comparison the index serves as one seek: (block, log) < (b, l) in (block desc, log desc) order.
    common.push(
      sql`(${t.blockNumber}, ${t.logIndex}) < (${query.before.blockNumber}, ${query.before.logIndex})`,
    );
  }
  if (query.fromBlock !== undefined) common.push(gte(t.blockNumber, query.fromBlock));
  if (query.toBlock !== undefined) common.push(lte(t.blockNumber, query.toBlock));

  if (query.party === undefined) {
    return db
      .select()
      .from(t)
      .where(and(...common))
      .orderBy(...newestFirst)
      .limit(query.limit)
      .offset(query.offset);
  }
  const party = query.party.toLowerCase();
  const depth = query.offset + query.limit;
  const side = (column: typeof t.fromAddress | typeof t.toAddress) =>
    db
      .select()
      .from(t)
      .where(and(...common, eq(column, party)))
      .orderBy(...newestFirst)
      .limit(depth);
  // UNION (not ALL) drops the second copy of a self-transfer, which both scans find.
  return union(side(t.fromAddress), side(t.toAddress))
    .orderBy(...newestFirstOfUnion)
    .limit(query.limit)
    .offset(query.offset);
}
