import { and, desc, eq, gt, inArray, lt, lte } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { equalsAny } from "./equalsAny.ts";
import type { Executor } from "./insertRows.ts";
import { blocks, indexerCursor, tokenBalances, tokenState, transactions } from "./schema.ts";

/** The polling indexer's cursor (`indexer_cursor.name`). */
export const CURSOR_NAME = "poll";

export type Cursor = { blockNumber: number; filterHash: string; updatedAt: Date };

/** The polling cursor: the last block whose whole range is committed, or null before the first commit. */
export async function getCursor(db: Db, name: string): Promise<Cursor | null> {
  const rows = await db.select().from(indexerCursor).where(eq(indexerCursor.name, name));
  const row = rows[0];
  return row ? { blockNumber: row.blockNumber, filterHash: row.filterHash, updatedAt: row.updatedAt } : null;
}

export type StoredBlock = { number: number; hash: string; parentHash: string };

/** The stored block header at `number`, if any. */
export async function getStoredBlock(db: Db, number: number): Promise<StoredBlock | null> {
  const rows = await db
    .select({ number: blocks.number, hash: blocks.hash, parentHash: blocks.parentHash })
    .from(blocks)
    .where(eq(blocks.number, number));
  return rows[0] ?? null;
}

/** Stored headers at or below `atOrBelow`, newest first: the walk-back path when looking for a common ancestor. */
export async function getStoredBlocksDesc(db: Db, atOrBelow: number, limit: number): Promise<StoredBlock[]> {
  return db
    .select({ number: blocks.number, hash: blocks.hash, parentHash: blocks.parentHash })
    .from(blocks)
    .where(lte(blocks.number, atOrBelow))
    .orderBy(desc(blocks.number))
    .limit(limit);
}

export type TokenBalanceMode = { token: string; mode: "delta" | "call"; fromBlock: number };

/** How each token's balances are kept (decided once, when the indexer first sees the token). */
export async function getTokenModes(db: Db): Promise<TokenBalanceMode[]> {
  const rows = await db.select().from(tokenState);
  return rows.map((r) => ({
    token: r.tokenAddress,
    mode: r.balanceMode as "delta" | "call",
    fromBlock: r.fromBlock,
  }));
}

export async function setTokenModes(db: Db, modes: readonly TokenBalanceMode[]): Promise<void> {
  if (modes.length === 0) return;
  await db
    .insert(tokenState)
    .values(modes.map((m) => ({ tokenAddress: m.token, balanceMode: m.mode, fromBlock: m.fromBlock })))
    .onConflictDoNothing();
}

/** Hashes of stored transactions among `hashes` (lowercase), read by `db` or inside a transaction. */
export async function storedHashes(db: Executor, hashes: readonly string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const rows = await db
    .select({ hash: transactions.hash })
    .from(transactions)
    .where(
      equalsAny(
        transactions.hash,
        hashes.map((h) => h.toLowerCase()),
        "text",
      ),
    )
    .execute(); // sent now, not a microtask later: see sendTogether
  return new Set(rows.map((r) => r.hash));
}

/**
 * Cached holders of the given tokens whose balance was last read before `blockNumber`, oldest first: the
 * balances of tokens that are not scanned in full can change in transactions protoscan never stores, so
 * they are read again at the end of each polling cycle.
 */
export async function getStaleHolders(
  db: Db,
  tokens: readonly string[],
  blockNumber: number,
  limit: number,
): Promise<{ token: string; holder: string }[]> {
  if (tokens.length === 0) return [];
  return db
    .select({ token: tokenBalances.tokenAddress, holder: tokenBalances.holder })
    .from(tokenBalances)
    .where(and(inArray(tokenBalances.tokenAddress, [...tokens]), lt(tokenBalances.blockNumber, blockNumber)))
    .orderBy(tokenBalances.blockNumber)
    .limit(limit);
}

/** Cached holders of the given tokens whose balance was read at a block after `blockNumber`. */
export async function getHoldersReadAfter(
  db: Db,
  tokens: readonly string[],
  blockNumber: number,
): Promise<{ token: string; holder: string }[]> {
  if (tokens.length === 0) return [];
  return db
    .select({ token: tokenBalances.tokenAddress, holder: tokenBalances.holder })
    .from(tokenBalances)
    .where(and(inArray(tokenBalances.tokenAddress, [...tokens]), gt(tokenBalances.blockNumber, blockNumber)));
}
