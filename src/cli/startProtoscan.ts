import type { FastifyInstance } from "fastify";
import { buildApp } from "../api/buildApp.ts";
import { buildOpsApp } from "../api/buildOpsApp.ts";
import { transactionJsonOf } from "../api/toTransactionJson.ts";
import { type ChainClient, createChainClient } from "../chain/createChainClient.ts";
import { configSecrets } from "../config/configSecrets.ts";
import type { Config } from "../config/schema.ts";
import { assertStoreOnChain } from "../indexer/assertStoreOnChain.ts";
import { heapWorkFor } from "../indexer/catchingUp.ts";
import type { Indexer, IndexerStatus } from "../indexer/createIndexer.ts";
import { createLocalBroadcaster } from "../ingest/broadcaster.ts";
import { createIngest, type Ingest } from "../ingest/createIngest.ts";
import type { Common } from "../internal/common.ts";
import { createLogger, type Logger } from "../internal/logger.ts";
import { createMetrics } from "../internal/metrics.ts";
import { CODE } from "../internal/repoRoot.ts";
import { createShutdown } from "../internal/shutdown.ts";
import { setHeapWork } from "../internal/tuneV8.ts";
import { createPriceEngine } from "../prices/createPriceEngine.ts";
import { createPriceHistory } from "../prices/createPriceHistory.ts";
import type { PriceRefresher } from "../prices/createPriceRefresher.ts";
import { createTransactionValuer } from "../prices/transactionValues.ts";
import { createHub, type HubSource } from "../realtime/createHub.ts";
import { createPgFanout } from "../realtime/createPgFanout.ts";
import { valueEvents } from "../realtime/valueEvents.ts";
import { createTimeSeries } from "../stats/createTimeSeries.ts";
import { listenForChanges } from "../store/changeNotices.ts";
import { createDatabase, type Database } from "../store/createDatabase.ts";
import { createWriterLock, type WriterLock } from "../store/createWriterLock.ts";
import { CURSOR_NAME, getCursor } from "../store/indexerState.ts";
import { migrate } from "../store/migrate.ts";
import { createTracker } from "../tracking/createTracker.ts";
import type { TrackWatcher } from "../tracking/createTrackWatcher.ts";
import type { InboxWorker } from "../webhooks/createInboxWorker.ts";
import { createInboxSignal } from "../webhooks/inboxSignal.ts";
import { showBackfillProgress } from "./createTerminalFace.ts";
import type { TerminalOutput } from "./createTerminalOutput.ts";
import { createWriters, type Writers } from "./createWriters.ts";
import { untilNodeAnswers } from "./untilNodeAnswers.ts";

export type Role = "all" | "api" | "indexer";

export type StartOptions = {
  config: Config;
  role: Role;
  host: string;
  port: number;
  databaseUrl?: string | undefined;
  dataDir: string;
  logLevel: string;
  /** a logger to use instead of a new JSON one (the CLI's chosen format, tests) */
  logger?: Logger;
  /** where to draw the live backfill progress line (a terminal; processes that run the writers) */
  progress?: TerminalOutput;
  /**
   * The database, already being opened by the caller with these options (the CLI opens it while this module
   * loads); otherwise opened here. Either way closed by `stop()`.
   */
  database?: Promise<Database>;
  /**
   * Aborted by the CLI on SIGTERM or Ctrl-C during the start-up: the waits for a node that does not answer end
   * (the start rejects with the signal's reason, after closing what it opened).
   */
  signal?: AbortSignal;
};

export type Protoscan = {
  url: string | null;
  common: Common;
  database: Database;
  chain: ChainClient;
  ingest: Ingest;
  /**
   * The writers (roles all/indexer) while this process runs them: always on PGlite; on PostgreSQL only while
   * it holds the writer lock (null on a standby).
   */
  readonly indexer: Indexer | null;
  /** drains the webhook inbox */
  readonly inboxWorker: InboxWorker | null;
  /** re-checks the track-tx watch list */
  readonly trackWatcher: TrackWatcher | null;
  /** keeps the prices table warm */
  readonly priceRefresher: PriceRefresher | null;
  /** the single-writer election (roles all/indexer on PostgreSQL) */
  writerLock: WriterLock | null;
  /** the API (roles all/api), or the ops server of an indexer (/healthz, /readyz, /metrics) */
  app: FastifyInstance | null;
  /**
   * Resolves when a writer stopped for good (the indexer found the database belongs to another chain:
   * `ChainMismatchError`); `/readyz` reports it meanwhile. The CLI then stops and exits 1. Never rejects.
   */
  failed: Promise<Error>;
  stop(): Promise<void>;
};

/** How often a process that serves the API looks at its indexer's status for the heap's tuning. */
const HEAP_WORK_CHECK_MS = 1000;

/**
 * Tune the heap for what the process does (`heapWorkFor`: serving, or indexing while its indexer catches up),
 * now and every `HEAP_WORK_CHECK_MS`; returns the stop. Only processes that serve the API call it: an indexer
 * alone keeps the lean growth `tuneV8` set.
 */
function followHeapWork(status: (() => IndexerStatus) | null, confirmations: number): () => Promise<void> {
  const apply = () => setHeapWork(heapWorkFor(status?.() ?? null, confirmations));
  apply();
  const timer = setInterval(apply, HEAP_WORK_CHECK_MS);
  timer.unref();
  return async () => clearInterval(timer);
}

/**
 * Wire protoscan's subsystems for one process and start them: database (+ migrations), chain client
 * (checked against `chain.id`), ingest pipeline, the writers (roles all/indexer: polling indexer, inbox
 * worker, track-tx watcher, price refresh; on PostgreSQL only in the process that wins the writer lock), and
 * the HTTP + WebSocket API (roles all/api; its hub fed by the PostgreSQL fan-out on PostgreSQL) or, for an
 * indexer, an ops server. `stop()` shuts everything down in reverse order (docs/operations.md).
 */
export async function startProtoscan(options: StartOptions): Promise<Protoscan> {
  const { config } = options;
  if (!options.databaseUrl && options.role !== "all") {
    throw new Error(
      `--role ${options.role} needs PostgreSQL (DATABASE_URL): the embedded PGlite database serves one process, which must run --role all`,
    );
  }
  const logger = options.logger ?? createLogger({ level: options.logLevel, secrets: configSecrets(config) });
  const shutdown = createShutdown();
  const common: Common = { config, logger, metrics: createMetrics({ processMetrics: true }), shutdown };

  try {
    const database = await (options.database ??
      createDatabase({ databaseUrl: options.databaseUrl, dataDir: options.dataDir, logger }));
    shutdown.add(() => database.close());
    const { applied } = await migrate(database);
    if (applied > 0) logger.info({ applied }, "database migrations applied");

    const chain = createChainClient(common);
    shutdown.add(() => chain.close());
    const waitForNode = <T>(what: string, call: () => Promise<T>) =>
      untilNodeAnswers(logger, what, call, { signal: options.signal });
    await waitForNode("the chain id check", () => chain.assertChainId(config.chain.id));
    // A database filled from another chain (a reused DATA_DIR with a new anvil, a wrong RPC_URL) would make
    // every polling cycle fail: refuse to start with what happened and what to do.
    await waitForNode("the check of the stored blocks", () =>
      assertStoreOnChain(common, { chain, db: database.db }),
    );

    // In-process events (the track watcher re-watches reorged transactions; on PGlite they feed the hub).
    // On PostgreSQL every commit also writes the fan-out outbox, from which every process's hub reads.
    const broadcaster = createLocalBroadcaster();
    const postgres = database.kind === "postgres" ? database : null;
    // It reads each new exclusive token's code at startBlock - 1 (ingest/tokenModes.ts): a node that does not
    // answer yet is waited for like above; one without that block's state stops the start with what it needs.
    const ingest = await waitForNode("the token balance modes", () =>
      createIngest(common, { chain, db: database.db, broadcaster, outbox: postgres !== null }),
    );

    // One price engine per process: the API reads it, and the active writer refreshes every tracked token's
    // price every prices.cacheSeconds so the prices table stays warm for every replica.
    const prices = createPriceEngine(common, { chain, db: database.db });
    // Committed writes heard (migration 0009): the API empties its caches on them, the price history its
    // spans of recorded points. An indexer alone has no cache to empty.
    const changes =
      options.role === "indexer"
        ? undefined
        : await listenForChanges(database, { logger: logger.child({ module: "api" }) });
    if (changes) shutdown.add(() => changes.close());
    // Prices at past times: transaction values at block time in the API and the WebSocket (SPEC §10.2).
    const history = createPriceHistory(common, { db: database.db, chain, changes });
    const valueTransactions = createTransactionValuer(config, history);
    // Protocol and global history: the API serves it, the writer values its bucket volumes in the background.
    const timeSeries = createTimeSeries(common, { db: database.db, prices: history, valueTransactions });

    // Webhook deliveries stored by the API are ingested by the writers; in one process the route wakes them.
    const inboxSignal = createInboxSignal();
    let onFatal: (error: Error) => void = () => undefined;
    const failed = new Promise<Error>((resolve) => {
      onFatal = resolve;
    });
    let writers: Writers | null = null;
    let writerLock: WriterLock | null = null;
    if (options.role !== "api") {
      writers = createWriters(common, {
        database,
        chain,
        ingest,
        events: broadcaster,
        inboxSignal,
        prices,
        timeSeries,
        onFatal,
      });
      if (postgres) {
        // Several processes may run the writers: a PostgreSQL advisory lock elects the one that does.
        writerLock = createWriterLock(common, { database: postgres, leader: writers });
        const lock = writerLock;
        shutdown.add(() => lock.stop());
        await writerLock.start();
      } else {
        const running = writers;
        shutdown.add(() => running.stop());
        await writers.start();
      }
    }

    if (writers && options.progress) {
      const running = writers;
      const stopProgress = showBackfillProgress(options.progress, async () => {
        const { indexedBlock, chainHead } = running.indexerStatus();
        const stored = await common.metrics.ingestTransactions.get();
        // Before this process's first commit its status has no indexed block: a backfill that began starts
        // from the committed cursor (or the block before the start block), so its first chunk shows too.
        const from =
          indexedBlock ??
          (chainHead === null
            ? null
            : ((await getCursor(database.db, CURSOR_NAME))?.blockNumber ?? config.indexer.startBlock - 1));
        return {
          indexedBlock: from,
          target: chainHead === null ? null : chainHead - config.indexer.confirmations,
          transactions: stored.values.find((v) => v.labels.source === "poll")?.value ?? 0,
          now: Date.now(),
        };
      });
      shutdown.add(stopProgress);
    }

    let app: FastifyInstance | null = null;
    let url: string | null = null;
    if (options.role !== "indexer") {
      // Broadcasts carry the Transaction JSON of GET /api/tx/:hash, serialized by the API's own function.
      const transactionJson = transactionJsonOf(config);
      let source: HubSource = broadcaster;
      if (postgres) {
        const fanout = createPgFanout(common, { database: postgres, transactionJson, valueTransactions });
        shutdown.add(() => fanout.stop());
        await fanout.start();
        source = fanout;
      }
      // The hub is stopped after the app has closed its sockets with 1001 (shutdown runs in reverse order).
      const valued = valueEvents(source, { transactionJson, value: valueTransactions, logger });
      const hub = createHub(common, { source: valued, transactionJson });
      hub.start();
      shutdown.add(() => hub.stop());
      app = await buildApp(common, {
        database,
        chain,
        hub,
        events: source,
        tracker: createTracker(common, { db: database.db, ingest }),
        prices,
        history,
        timeSeries,
        ...(changes ? { changes } : {}),
        ...(writers ? { indexerStatus: writers.indexerStatus, inboxSignal } : {}),
        ...(writerLock ? { writerLock } : {}),
      });
      const server = app;
      shutdown.add(() => server.close());
      url = await app.listen({ host: options.host, port: options.port });
      // Serving: the heap is tuned for it, except while this process's indexer backfills.
      const running = writers;
      shutdown.add(followHeapWork(running && (() => running.indexerStatus()), config.indexer.confirmations));
      logger.info(
        { url, role: options.role, database: database.label, code: CODE },
        "protoscan is listening",
      );
    } else {
      // An indexer serves only /healthz, /readyz and /metrics, so it can be probed and scraped.
      const ops = await buildOpsApp(common, {
        database,
        chain,
        ...(writers ? { indexerStatus: writers.indexerStatus } : {}),
        ...(writerLock ? { writerLock } : {}),
      });
      shutdown.add(() => ops.close());
      url = await ops.listen({ host: options.host, port: options.port });
      logger.info(
        { url, role: options.role, database: database.label, code: CODE },
        "protoscan indexer started",
      );
    }

    return {
      url,
      common,
      database,
      chain,
      ingest,
      get indexer() {
        return writers?.indexer() ?? null;
      },
      get inboxWorker() {
        return writers?.inboxWorker() ?? null;
      },
      get trackWatcher() {
        return writers?.trackWatcher() ?? null;
      },
      get priceRefresher() {
        return writers?.priceRefresher() ?? null;
      },
      writerLock,
      app,
      failed,
      stop: () => shutdown.kill(),
    };
  } catch (error) {
    await shutdown.kill();
    throw error;
  }
}
