import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { Common } from "../internal/common.ts";
import { HTTP_TIMEOUT_OPTIONS } from "./httpTimeouts.ts";
import { registerAccessLog } from "./plugins/accessLog.ts";
import { echoRequestId } from "./plugins/requestId.ts";
import { clientErrorHandler, frameworkErrorHandler, registerProblemHandler } from "./problemHandler.ts";
import { type OpsDeps, registerOpsRoutes } from "./routes/ops.ts";

/**
 * The small HTTP server of an `--role indexer` process: `GET /healthz`, `GET /readyz` (with the writer lock:
 * whether this process is the active writer or a standby) and `GET /metrics`, so an orchestrator can probe
 * and scrape indexers like API replicas. Nothing else: no API, no WebSocket, no CORS, no rate limit (only
 * the operations network should reach it). Errors are problem+json like the API's.
 */
export async function buildOpsApp(common: Common, deps: OpsDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: common.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // The API's timeouts: a slow or stalled client must not hold an indexer's sockets either.
    ...HTTP_TIMEOUT_OPTIONS,
    requestIdHeader: "x-request-id",
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });
  registerProblemHandler(app);
  echoRequestId(app);
  registerAccessLog(app, common.metrics);
  registerOpsRoutes(app, common, deps);
  return app;
}
