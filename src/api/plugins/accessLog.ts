import type { FastifyInstance } from "fastify";
import type { Metrics } from "../../internal/metrics.ts";

/** Probes and scrapes: logged at debug, or an orchestrator polling them would drown the access log. */
const QUIET_ROUTES: ReadonlySet<string> = new Set(["/healthz", "/readyz", "/metrics"]);

/** The label of requests no route matched (404s, wrong methods): never the raw URL, which is unbounded. */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * One access-log line and one sample of the HTTP metrics per answered request (an `onResponse` hook), with
 * the route pattern (`/api/tx/:hash`), never the raw URL, so neither logs nor metric labels carry
 * user input of unbounded variety. The line is written through `request.log`, whose bindings already hold
 * `reqId` (the `X-Request-Id` echoed to the client): `{"reqId":…,"method":"GET","route":"/api/tx/:hash",
 * "status":200,"ms":3.1,"msg":"request"}`. Register before the routes.
 */
export function registerAccessLog(app: FastifyInstance, metrics: Metrics): void {
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    const status = reply.statusCode;
    const ms = reply.elapsedTime;
    metrics.httpRequests.inc({ method: request.method, route, status: String(status) });
    metrics.httpRequestDuration.observe({ method: request.method, route }, ms / 1000);
    const line = { method: request.method, route, status, ms: Math.round(ms * 10) / 10 };
    if (QUIET_ROUTES.has(route)) request.log.debug(line, "request");
    else request.log.info(line, "request");
    done();
  });
}
