import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import { isCatchingUp } from "../indexer/catchingUp.ts";
import type { Common } from "../internal/common.ts";
import { createPriceEngine } from "../prices/createPriceEngine.ts";
import { createPriceHistory } from "../prices/createPriceHistory.ts";
import { createTransactionValuer } from "../prices/transactionValues.ts";
import { createTimeSeries } from "../stats/createTimeSeries.ts";
import { createUsdStats } from "../stats/createUsdStats.ts";
import { listenForChanges } from "../store/changeNotices.ts";
import { type AppDeps, BODY_LIMIT, type RouteDeps } from "./appDeps.ts";
import { createAccountReader } from "./createAccountReader.ts";
import { HTTP_TIMEOUT_OPTIONS } from "./httpTimeouts.ts";
import { lazySchemaCompilers } from "./lazySchemaCompilers.ts";
import { registerHttpPlugins } from "./plugins/registerHttpPlugins.ts";
import { clientErrorHandler, frameworkErrorHandler, registerProblemHandler } from "./problemHandler.ts";
import { registerAddressRoutes } from "./routes/address.ts";
import { registerEtherscanRoutes } from "./routes/etherscan.ts";
import { registerExportRoutes } from "./routes/exports.ts";
import { registerOpsRoutes } from "./routes/ops.ts";
import { registerOverviewRoutes } from "./routes/overview.ts";
import { registerPriceHistoryRoutes } from "./routes/priceHistory.ts";
import { registerProtocolRoutes } from "./routes/protocols.ts";
import { registerSearchRoutes } from "./routes/search.ts";
import { registerStatsRoutes } from "./routes/stats.ts";
import { registerTokenRoutes } from "./routes/tokens.ts";
import { registerTrackTxRoutes } from "./routes/trackTx.ts";
import { registerTransactionRoutes } from "./routes/transactions.ts";
import { registerWebApp } from "./routes/webApp.ts";
import { registerWebhookRoutes } from "./routes/webhooks.ts";
import { registerWebSocketRoute } from "./routes/websocket.ts";

export type App = FastifyInstance;

/**
 * Build the HTTP API (SPEC §4) without listening: `src/cli/` listens, tests use `app.inject()`.
 * Request and response schemas (TypeBox) validate input, serialize output and produce the OpenAPI document.
 */
export async function buildApp(common: Common, deps: AppDeps): Promise<FastifyInstance> {
  // Each route's schemas are compiled on its first request, not while the app starts (lazySchemaCompilers.ts).
  const schemas = lazySchemaCompilers();
  const app = Fastify({
    loggerInstance: common.logger as FastifyBaseLogger,
    // Per-request lines are left to the access log of the operations issue; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    ...HTTP_TIMEOUT_OPTIONS,
    requestIdHeader: "x-request-id",
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, allErrors: false } },
    schemaController: { compilersFactory: schemas.compilersFactory },
    // Errors raised before routing (bad URL) or below HTTP (unparsable request) are problem+json too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();
  schemas.attach(app);

  const prices = deps.prices ?? createPriceEngine(common, { chain: deps.chain, db: deps.database.db });
  const usdStats =
    deps.usdStats ??
    createUsdStats(common, {
      db: deps.database.db,
      prices,
      deferValuation: () => {
        const status = deps.indexerStatus?.();
        return status !== undefined && isCatchingUp(status, common.config.indexer.confirmations);
      },
    });
  // Caches exist only with events; those built from balances or the cursor also need the change notices.
  let changes = deps.changes;
  if (deps.events && !changes) {
    const own = await listenForChanges(deps.database, { logger: common.logger.child({ module: "api" }) });
    app.addHook("onClose", () => own.close());
    changes = own;
  }
  const history =
    deps.history ?? createPriceHistory(common, { db: deps.database.db, chain: deps.chain, changes });
  const valueTransactions = createTransactionValuer(common.config, history);
  const timeSeries =
    deps.timeSeries ?? createTimeSeries(common, { db: deps.database.db, prices: history, valueTransactions });
  const accounts = createAccountReader({ chain: deps.chain, logger: common.logger.child({ module: "api" }) });
  const routeDeps: RouteDeps = {
    ...deps,
    prices,
    history,
    valueTransactions,
    usdStats,
    accounts,
    timeSeries,
    ...(changes ? { changes } : {}),
  };

  registerProblemHandler(app);
  await registerHttpPlugins(app, common);
  registerWebApp(app, common, deps.webRoot ? { root: deps.webRoot } : {});
  registerOpsRoutes(app, common, deps);
  registerTransactionRoutes(app, common, routeDeps);
  registerStatsRoutes(app, common, routeDeps);
  registerProtocolRoutes(app, common, routeDeps);
  registerOverviewRoutes(app, common, routeDeps);
  registerSearchRoutes(app, common, routeDeps);
  registerAddressRoutes(app, common, routeDeps);
  registerExportRoutes(app, common, routeDeps);
  registerTokenRoutes(app, common, routeDeps);
  registerPriceHistoryRoutes(app, common, routeDeps);
  registerWebhookRoutes(app, common, deps);
  registerTrackTxRoutes(app, common, routeDeps);
  registerEtherscanRoutes(app, common, routeDeps);
  await registerWebSocketRoute(app, common, deps);
  return app;
}
