import type { HeapWork } from "../internal/tuneV8.ts";

/** The part of an indexer's status (`Indexer.status()`, or what the API is given of it) the rule reads. */
export type IndexerProgress = { chainHead: number | null; indexedBlock: number | null };

/**
 * Blocks below its target (`head - confirmations`) above which the polling indexer counts as catching up: a
 * backfill, or a restart after downtime, rather than a poll that follows the head.
 */
export const CATCHING_UP_BLOCKS = 10;

/**
 * Whether the indexer is catching up. Derived work that each commit would make stale again, or that competes
 * with the commits for the database (PGlite runs one statement at a time), waits meanwhile: the background
 * valuation of history volumes (stats/createHistoryValuer.ts) and of the last 24 hours' volumes
 * (stats/createUsdStats.ts). The lag counts from the head, so the confirmations the indexer keeps behind it
 * on purpose are taken off: with `confirmations: 12` on mainnet, an indexer at its target is 12 blocks behind
 * the head and is not catching up. False while the head or the indexed block is not known yet (no cycle has
 * started).
 */
export function isCatchingUp(status: IndexerProgress, confirmations: number): boolean {
  const { chainHead, indexedBlock } = status;
  return (
    chainHead !== null &&
    indexedBlock !== null &&
    chainHead - indexedBlock - confirmations > CATCHING_UP_BLOCKS
  );
}

/**
 * What this process's heap should be tuned for (internal/tuneV8.ts `setHeapWork`), given its indexer's status
 * (null: it runs none, as an API replica). Indexing while a backfill cycle runs (to its end: its last blocks
 * may be dense), while the indexer catches up, while a cycle runs whose head is not known yet, and while the
 * head is known but nothing is indexed yet (a first backfill before its first commit): a backfill's peak
 * memory is what a third of Ponder's is judged on. Serving otherwise, also while it runs no cycle and knows no
 * head (a standby writer on PostgreSQL).
 */
export function heapWorkFor(
  status: (IndexerProgress & { running: boolean; backfilling: boolean }) | null,
  confirmations: number,
): HeapWork {
  if (status === null) return "serving";
  if (status.backfilling) return "indexing";
  if (status.chainHead === null) return status.running ? "indexing" : "serving";
  if (status.indexedBlock === null) return "indexing";
  return isCatchingUp(status, confirmations) ? "indexing" : "serving";
}
