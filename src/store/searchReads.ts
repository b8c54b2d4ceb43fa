import { asc, eq } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { blocks, transactions } from "./schema.ts";

/** Lookups behind `GET /api/search` (SPEC §4 row 12); each is one primary-key or unique-index read. */

export type TransactionHit = {
  hash: string;
  blockNumber: number;
  blockTimestamp: Date;
  protocol: string;
  actionType: string;
};

/** The stored transaction with this hash (any case), or null. */
export async function findTransactionHit(db: Db, hash: string): Promise<TransactionHit | null> {
  const [row] = await db
    .select({
      hash: transactions.hash,
      blockNumber: transactions.blockNumber,
      blockTimestamp: transactions.blockTimestamp,
      protocol: transactions.protocol,
      actionType: transactions.actionType,
    })
    .from(transactions)
    .where(eq(transactions.hash, hash.toLowerCase()));
  return row ?? null;
}

export type BlockHit = {
  number: number;
  /** null when protoscan keeps no header for the block (outside the reorg window and without transactions) */
  hash: string | null;
  timestamp: Date | null;
  /** hashes of its stored transactions, in block order */
  transactions: string[];
};

/**
 * A block by number, with its stored transactions (`transactions_block_idx`) and its header when stored;
 * null when protoscan knows neither.
 */
export async function findBlockByNumber(db: Db, number: number): Promise<BlockHit | null> {
  const [header, txs] = await Promise.all([
    db.select().from(blocks).where(eq(blocks.number, number)),
    db
      .select({ hash: transactions.hash })
      .from(transactions)
      .where(eq(transactions.blockNumber, number))
      .orderBy(asc(transactions.transactionIndex)),
  ]);
  const block = header[0];
  if (!block && txs.length === 0) return null;
  return {
    number,
    hash: block?.hash ?? null,
    timestamp: block?.timestamp ?? null,
    transactions: txs.map((t) => t.hash),
  };
}

/** A stored block header by hash (any case, `blocks_hash_idx`), with its stored transactions; or null. */
export async function findBlockByHash(db: Db, hash: string): Promise<BlockHit | null> {
  const [block] = await db
    .select({ number: blocks.number })
    .from(blocks)
    .where(eq(blocks.hash, hash.toLowerCase()));
  return block ? findBlockByNumber(db, block.number) : null;
}
