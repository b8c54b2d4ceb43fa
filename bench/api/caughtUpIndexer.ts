import type { Indexer } from "../../src/indexer/createIndexer.ts";

/**
 * What the API of a `protoscan start` process on PGlite (role all) reads of its in-process indexer once it
 * has caught up with the seeded head: its status, in memory (`/api/stats` and `/api/overview` show it). The
 * benchmark seeds the store directly and runs no polling loop, so this stands in for the indexer the way the
 * JSON-RPC stand-in stands in for the node. Without it (the PostgreSQL run, shaped like a `--role api`
 * replica) the API reads the committed cursor per request instead.
 */
export function caughtUpIndexer(head: number, lastRunAt: Date): Indexer {
  return {
    start() {},
    stop: async () => {},
    runCycle: async () => ({ indexedBlock: head, target: head, stored: 0, reorgs: 0, ended: "caught-up" }),
    status: () => ({
      chainHead: head,
      indexedBlock: head,
      lagBlocks: 0,
      lastRunAt,
      running: false,
      backfilling: false,
      failure: null,
    }),
  };
}
