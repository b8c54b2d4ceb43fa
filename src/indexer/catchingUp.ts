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
