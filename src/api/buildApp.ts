import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { Common } from "../internal/common.ts";
import { createPriceEngine, type PriceEngine } from "../prices/createPriceEngine.ts";
import type { Hub, HubSource } from "../realtime/createHub.ts";
import { registerWebSocketRoute } from "../realtime/websocketRoute.ts";
import { createUsdStats, type UsdStats } from "../stats/createUsdStats.ts";
import { type ChangeNotices, listenForChanges } from "../store/changeNotices.ts";
import type { Database } from "../store/createDatabase.ts";
import type { WriterLock } from "../store/createWriterLock.ts";
import type { Tracker } from "../tracking/createTracker.ts";
import type { InboxSignal } from "../webhooks/inboxSignal.ts";
import { HTTP_TIMEOUT_OPTIONS } from "./httpTimeouts.ts";
import { registerHttpPlugins } from "./plugins/registerHttpPlugins.ts";
import { clientErrorHandler, frameworkErrorHandler, registerProblemHandler } from "./problemHandler.ts";
import { registerAddressRoutes } from "./routes/address.ts";
import { registerOpsRoutes } from "./routes/ops.ts";
import { registerOverviewRoutes } from "./routes/overview.ts";
import { registerProtocolRoutes } from "./routes/protocols.ts";
import { registerSearchRoutes } from "./routes/search.ts";
import { registerStatsRoutes } from "./routes/stats.ts";
import { registerTokenRoutes } from "./routes/tokens.ts";
import { registerTrackTxRoutes } from "./routes/trackTx.ts";
import { registerTransactionRoutes } from "./routes/transactions.ts";
import { registerWebhookRoutes } from "./routes/webhooks.ts";

/** What the API shows of a polling indexer (`Indexer.status()` in src/indexer/createIndexer.ts). */
export type IndexerStatus = {
  chainHead: number | null;
  indexedBlock: number | null;
  lastRunAt: Date | null;
  /** why the indexer stopped for good, else null (GET /readyz) */
  failure: string | null;
};

export type AppDeps = {
  database: Database;
  chain: ChainClient;
  /**
   * the progress of this process's polling indexer (processes that run the writers): read only, the API
   * never drives the poller
   */
  indexerStatus?: () => IndexerStatus;
  /** the WebSocket hub behind GET /ws (processes that serve the API) */
  hub?: Hub;
  /**
   * the stored and removed transactions this process hears of (the hub's source): read caches are emptied
   * by them (api/createResponseCache.ts); without it nothing is cached
   */
  events?: HubSource;
  /** wakes the webhook inbox worker of this process when a delivery is stored (roles all) */
  inboxSignal?: InboxSignal;
  /** ingests hashes submitted to POST /api/track-tx (processes that serve the API) */
  tracker?: Tracker;
  /** the single-writer election, shown by GET /readyz (role all on PostgreSQL) */
  writerLock?: Pick<WriterLock, "status">;
  /** the price engine (in one process, the one the indexer's price refresh uses); built when absent */
  prices?: PriceEngine;
  /** the USD statistics behind protocol stats, overview and /api/stats; built when absent */
  usdStats?: UsdStats;
  /**
   * committed changes to token balances and the cursor (migration 0009), which empty the caches built from
   * them; with `events` and without it, the app listens itself (and stops when it closes)
   */
  changes?: ChangeNotices;
};

/** What route modules receive: the app's deps with the price engine and the USD statistics filled in. */
export type RouteDeps = AppDeps & { prices: PriceEngine; usdStats: UsdStats };

export type App = FastifyInstance;

export const BODY_LIMIT = 1024 * 1024;

/**
 * Build the HTTP API (SPEC §4) without listening: `src/cli/` listens, tests use `app.inject()`.
 * Request and response schemas (TypeBox) validate input, serialize output and produce the OpenAPI document.
 */
export async function buildApp(common: Common, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: common.logger as FastifyBaseLogger,
    // Per-request lines are left to the access log of the operations issue; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    ...HTTP_TIMEOUT_OPTIONS,
    requestIdHeader: "x-request-id",
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, allErrors: false } },
    // Errors raised before routing (bad URL) or below HTTP (unparsable request) are problem+json too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const prices = deps.prices ?? createPriceEngine(common, { chain: deps.chain, db: deps.database.db });
  const usdStats = deps.usdStats ?? createUsdStats(common, { db: deps.database.db, prices });
  // Caches exist only with events; those built from balances or the cursor also need the change notices.
  let changes = deps.changes;
  if (deps.events && !changes) {
    const own = await listenForChanges(deps.database, { logger: common.logger.child({ module: "api" }) });
    app.addHook("onClose", () => own.close());
    changes = own;
  }
  const routeDeps: RouteDeps = { ...deps, prices, usdStats, ...(changes ? { changes } : {}) };

  registerProblemHandler(app);
  await registerHttpPlugins(app, common);
  registerOpsRoutes(app, common, deps);
  registerTransactionRoutes(app, common, deps);
  registerStatsRoutes(app, common, routeDeps);
  registerProtocolRoutes(app, common, routeDeps);
  registerOverviewRoutes(app, common, routeDeps);
  registerSearchRoutes(app, common, deps);
  registerAddressRoutes(app, common, routeDeps);
  registerTokenRoutes(app, common, routeDeps);
  registerWebhookRoutes(app, common, deps);
  registerTrackTxRoutes(app, common, deps);
  await registerWebSocketRoute(app, common, deps);
  return app;
}
