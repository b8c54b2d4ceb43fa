import type { IndexedTransaction } from "../decode/decodeTransaction.ts";
import { canCopyRows, type EncodedCopy, encodeCopy } from "./copyRows.ts";
import type { Db } from "./createDatabase.ts";
import {
  encodeAddressTransactions,
  encodeLogs,
  encodeTransaction,
  encodeTransfers,
  type IngestSource,
} from "./encode.ts";
import { addressTransactions, logs, tokenTransfers, transactions } from "./schema.ts";

/** A transfer row encoded for its table: what it says about balances (balanceDeltas) comes from it. */
export type EncodedTransfer = ReturnType<typeof encodeTransfers>[number];

/**
 * The rows of a commit's transactions in COPY's text format (PGlite), one per table, and the transfer rows
 * among them (their balance deltas), made by `encodeCommitRows` from the same transactions the commit is
 * given.
 */
export type EncodedRows = {
  readonly copies: readonly (EncodedCopy | null)[];
  readonly transfers: readonly EncodedTransfer[];
};

/**
 * Encode the rows of `transactions` for the commit that will store them, or undefined where commits do not
 * copy (PostgreSQL). The polling indexer encodes a group while the previous one is stored, so that the
 * commit's statements go out at once (docs/performance.md, "Indexer backfill").
 */
export function encodeCommitRows(
  db: Db,
  transactions: readonly IndexedTransaction[],
  source: IngestSource,
): EncodedRows | undefined {
  return canCopyRows(db) ? encodeRows(uniqueInOrder(transactions), source) : undefined;
}

/** The rows of `sorted` (unique, in block order: `uniqueInOrder`), as `encodeCommitRows` gives them. */
export function encodeRows(sorted: readonly IndexedTransaction[], source: IngestSource): EncodedRows {
  const transfers = sorted.flatMap(encodeTransfers);
  return {
    copies: [
      encodeCopy(
        transactions,
        sorted.map((t) => encodeTransaction(t, source)),
      ),
      encodeCopy(logs, sorted.flatMap(encodeLogs)),
      encodeCopy(tokenTransfers, transfers),
      encodeCopy(addressTransactions, sorted.flatMap(encodeAddressTransactions)),
    ],
    transfers,
  };
}

/** Each hash once (the last given wins), in block order. */
export function uniqueInOrder(given: readonly IndexedTransaction[]): IndexedTransaction[] {
  return [...new Map(given.map((t) => [t.hash.toLowerCase(), t])).values()].sort(
    (a, b) => a.blockNumber - b.blockNumber || a.transactionIndex - b.transactionIndex,
  );
}
