import type { ChainClient } from "../chain/createChainClient.ts";
import { isCatchingUp } from "../indexer/catchingUp.ts";
import { createIndexer, type Indexer, type IndexerStatus } from "../indexer/createIndexer.ts";
import type { Broadcaster } from "../ingest/broadcaster.ts";
import type { Ingest } from "../ingest/createIngest.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import { createPriceBackfill, type PriceBackfill } from "../prices/createPriceBackfill.ts";
import type { PriceEngine } from "../prices/createPriceEngine.ts";
import { createPriceRefresher, type PriceRefresher } from "../prices/createPriceRefresher.ts";
import { createHistoryValuer, type HistoryValuer } from "../stats/createHistoryValuer.ts";
import type { TimeSeries } from "../stats/createTimeSeries.ts";
import type { Database } from "../store/createDatabase.ts";
import type { Leader } from "../store/createWriterLock.ts";
import { maintainTables } from "../store/maintainTables.ts";
import { pruneOutbox } from "../store/outbox.ts";
import { createTrackWatcher, type TrackWatcher } from "../tracking/createTrackWatcher.ts";
import { createInboxWorker, type InboxWorker } from "../webhooks/createInboxWorker.ts";
import type { InboxSignal } from "../webhooks/inboxSignal.ts";

/** How long the fan-out outbox keeps a row: a listener away longer than this misses events. */
export const OUTBOX_RETENTION_MS = 15 * 60_000;
const OUTBOX_PRUNE_EVERY_MS = 60_000;
/** How often PGlite's tables are checked for growth (store/maintainTables.ts: its autovacuum). */
const TABLE_MAINTENANCE_EVERY_MS = 30_000;

/**
 * Everything that writes on its own initiative, run by the one active writer (SPEC §9): the polling
 * indexer, the webhook inbox worker, the track-tx watcher, the price refresh and the api price backfill
 * (when a price engine is given) and the housekeeping: on PostgreSQL the outbox pruning, on PGlite the table maintenance its missing
 * autovacuum would do. `start` builds fresh instances each time (each subsystem's `stop` is final), so a
 * process that loses the writer lock and wins it again starts over from the committed state.
 */
export type Writers = Leader & {
  /** the running indexer, or null while this process is not the writer */
  indexer(): Indexer | null;
  inboxWorker(): InboxWorker | null;
  trackWatcher(): TrackWatcher | null;
  priceRefresher(): PriceRefresher | null;
  /**
   * For the API, read only: the status of the running indexer, or an idle one (all null) while standing by,
   * in which case the API reads the committed cursor instead.
   */
  indexerStatus(): IndexerStatus;
};

type Running = {
  indexer: Indexer;
  inboxWorker: InboxWorker;
  trackWatcher: TrackWatcher;
  priceRefresher: PriceRefresher | null;
  priceBackfill: PriceBackfill | null;
  historyValuer: HistoryValuer | null;
  housekeeping: { stop(): Promise<void> };
};

const IDLE: IndexerStatus = {
  chainHead: null,
  indexedBlock: null,
  lagBlocks: null,
  lastRunAt: null,
  running: false,
  backfilling: false,
  failure: null,
};

export function createWriters(
  common: Common,
  deps: {
    database: Database;
    chain: ChainClient;
    ingest: Ingest;
    /** the in-process events of the ingest pipeline (the track watcher re-watches reorged transactions) */
    events: Broadcaster;
    /** wakes the inbox worker when this process stored a webhook delivery */
    inboxSignal: InboxSignal;
    prices?: PriceEngine;
    /** history volumes, valued in the background after commits (stats/createHistoryValuer.ts) */
    timeSeries?: Pick<TimeSeries, "valueStale">;
    /** the indexer stopped for good: the database belongs to another chain */
    onFatal?: (error: Error) => void;
  },
): Writers {
  const db = deps.database.db;
  let running: Running | null = null;

  const start = () => {
    if (running) return;
    const indexer = createIndexer(common, {
      chain: deps.chain,
      db,
      ingest: deps.ingest,
      ...(deps.onFatal ? { onFatal: deps.onFatal } : {}),
    });
    const inboxWorker = createInboxWorker(common, { db, ingest: deps.ingest, signal: deps.inboxSignal });
    const trackWatcher = createTrackWatcher(common, {
      db,
      chain: deps.chain,
      ingest: deps.ingest,
      events: deps.events,
    });
    const priceRefresher = deps.prices ? createPriceRefresher(common, { prices: deps.prices }) : null;
    // Hourly api-tier price history for the indexed range (SPEC §10.1), when a price API is configured.
    const priceBackfill = deps.prices ? createPriceBackfill(common, { db }) : null;
    const housekeeping =
      deps.database.kind === "postgres"
        ? startPruner(common, deps.database)
        : startTableMaintenance(common, deps.database);
    // Not before the indexer has read the head, nor while it catches up or the api-tier price backfill stores
    // chunks: each commit or chunk would make it value the same buckets again.
    const historyValuer = deps.timeSeries
      ? createHistoryValuer(common, {
          timeSeries: deps.timeSeries,
          busy: () => {
            const status = indexer.status();
            return (
              status.lagBlocks === null ||
              isCatchingUp(status, common.config.indexer.confirmations) ||
              priceBackfill?.filling() === true
            );
          },
        })
      : null;
    running = {
      indexer,
      inboxWorker,
      trackWatcher,
      priceRefresher,
      priceBackfill,
      historyValuer,
      housekeeping,
    };
    indexer.start();
    inboxWorker.start();
    trackWatcher.start();
    priceRefresher?.start();
    priceBackfill?.start();
    historyValuer?.start();
  };

  const stop = async () => {
    const current = running;
    running = null;
    if (!current) return;
    // In parallel: the indexer finishes the commit in flight while the others end their current step.
    await Promise.all([
      current.indexer.stop(),
      current.inboxWorker.stop(),
      current.trackWatcher.stop(),
      current.priceRefresher?.stop(),
      current.priceBackfill?.stop(),
      current.historyValuer?.stop(),
      current.housekeeping.stop(),
    ]);
    // A standby reports no progress of its own: stale values would keep lag alerts firing (or silent).
    common.metrics.indexerHeadBlock.reset();
    common.metrics.indexerIndexedBlock.reset();
    common.metrics.indexerDeferredIndexes.reset();
  };

  return {
    start,
    stop,
    indexer: () => running?.indexer ?? null,
    inboxWorker: () => running?.inboxWorker ?? null,
    trackWatcher: () => running?.trackWatcher ?? null,
    priceRefresher: () => running?.priceRefresher ?? null,
    indexerStatus: () => running?.indexer.status() ?? { ...IDLE },
  };
}

/** Delete outbox rows past the retention once a minute (store/outbox.ts). */
function startPruner(common: Common, database: Database): { stop(): Promise<void> } {
  const logger = common.logger.child({ subsystem: "fanout" });
  let running: Promise<void> | undefined;
  const prune = () => {
    running ??= pruneOutbox(database.db, OUTBOX_RETENTION_MS)
      .then((deleted) => {
        if (deleted > 0) logger.debug({ deleted }, "outbox pruned");
      })
      .catch((error: unknown) => {
        logger.warn({ err: errorMessage(error) }, "outbox pruning failed; retrying later");
      })
      .finally(() => {
        running = undefined;
      });
  };
  prune();
  const timer = setInterval(prune, OUTBOX_PRUNE_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * PGlite has no autovacuum: every 30 s, vacuum and analyze the tables that grew by a fifth since the last
 * time (store/maintainTables.ts), so the planner has statistics and index-only scans a visibility map.
 */
function startTableMaintenance(common: Common, database: Database): { stop(): Promise<void> } {
  const logger = common.logger.child({ subsystem: "store" });
  let running: Promise<void> | undefined;
  const maintain = () => {
    if (running) return;
    const started = performance.now();
    running = maintainTables(database.db)
      .then((tables) => {
        if (tables.length === 0) return;
        const ms = Math.round(performance.now() - started);
        logger.info({ tables: tables.map((t) => t.table), ms }, "tables vacuumed and analyzed");
      })
      .catch((error: unknown) => {
        logger.warn({ err: errorMessage(error) }, "table maintenance failed; retrying later");
      })
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(maintain, TABLE_MAINTENANCE_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
