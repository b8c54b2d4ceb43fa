import type { Logger } from "../internal/logger.ts";

const LOG_EVERY_MS = 5_000;

/**
 * Backfill progress for the logs: blocks/s, transactions/s and an ETA, at most every five seconds, and a
 * summary when a cycle that did work ends.
 */
export function createProgress(logger: Logger) {
  let startedAt = 0;
  let startBlock = 0;
  let target = 0;
  let stored = 0;
  let lastLog = 0;
  return {
    begin(cursor: number, to: number) {
      startedAt = Date.now();
      lastLog = startedAt;
      startBlock = cursor;
      target = to;
    },
    advance(cursor: number, inserted: number) {
      stored += inserted;
      const now = Date.now();
      if (now - lastLog < LOG_EVERY_MS) return;
      lastLog = now;
      const seconds = (now - startedAt) / 1000;
      const blocksPerSecond = (cursor - startBlock) / seconds;
      logger.info(
        {
          indexedBlock: cursor,
          target,
          blocksPerSecond: Math.round(blocksPerSecond),
          transactionsPerSecond: Math.round(stored / seconds),
          etaSeconds: blocksPerSecond > 0 ? Math.round((target - cursor) / blocksPerSecond) : null,
        },
        "backfilling",
      );
    },
    end(cursor: number) {
      if (cursor <= startBlock && stored === 0) return;
      logger.info(
        {
          indexedBlock: cursor,
          blocks: cursor - startBlock,
          stored,
          seconds: (Date.now() - startedAt) / 1000,
        },
        "indexer cycle done",
      );
    },
  };
}
