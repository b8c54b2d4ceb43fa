import type { FastifyInstance } from "fastify";
import type { Common } from "../../internal/common.ts";
import { registerAccessLog } from "./accessLog.ts";
import { registerCors } from "./cors.ts";
import { acceptJsonBodiesOnly } from "./jsonBodiesOnly.ts";
import { registerOpenApi } from "./openapi.ts";
import { registerRateLimit } from "./rateLimit.ts";
import { rejectNulParameters } from "./rejectNul.ts";
import { echoRequestId } from "./requestId.ts";

/**
 * The cross-cutting HTTP layer every route gets (SPEC §4, §8): the request id echoed back, an access-log
 * line and HTTP metrics per request, CORS, per-IP rate limiting, no U+0000 in parameters, JSON-only bodies
 * (the 1 MiB limit is Fastify's `bodyLimit`), and the OpenAPI document with its interactive reference.
 * Call once in `buildApp`, after the problem handler and before any route: the rate limit and the
 * document attach to routes as they are registered.
 */
export async function registerHttpPlugins(app: FastifyInstance, common: Common): Promise<void> {
  echoRequestId(app);
  registerAccessLog(app, common.metrics);
  await registerCors(app, common.config.api);
  await registerRateLimit(app, common.config.api);
  rejectNulParameters(app);
  acceptJsonBodiesOnly(app);
  await registerOpenApi(app);
}
