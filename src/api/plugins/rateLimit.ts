import rateLimit, { normalizeIP } from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Config } from "../../config/schema.ts";
import { ApiError } from "../errorRegistry.ts";

/** Operational endpoints probed by orchestrators and scrapers: never rate limited (SPEC §4). */
export const RATE_LIMIT_EXEMPT_PATHS: readonly string[] = ["/healthz", "/readyz", "/metrics"];
/** Provider webhooks: signed deliveries, retried by the provider; SPEC §8 limits reads and track-tx only. */
export const RATE_LIMIT_EXEMPT_PREFIX = "/api/webhooks/";

/** Whether the route registered at `url` (Fastify pattern, e.g. `/api/webhooks/:provider`) is exempt. */
export function isRateLimitExempt(url: string | undefined): boolean {
  return (
    url !== undefined && (RATE_LIMIT_EXEMPT_PATHS.includes(url) || url.startsWith(RATE_LIMIT_EXEMPT_PREFIX))
  );
}

/**
 * The rate-limit key of a request: its peer address, normalized as the plugin does by default (IPv6 by /64).
 * A client that hung up before its request got here has no address any more (`request.ip` is undefined):
 * the plugin's default key generator throws on it and the request ends in a logged 500, as `npm run
 * bench:soak` found on an overloaded machine. Such requests share one key; nobody reads their answers.
 */
export function rateLimitKey(request: Pick<FastifyRequest, "ip">): string {
  const ip = request.ip as string | undefined;
  return ip === undefined ? "disconnected" : normalizeIP(ip);
}

/**
 * Per client IP, `api.rateLimitPerMinute` requests per rolling minute on every route but the exempt ones
 * (@fastify/rate-limit, in-memory store: each process counts its own clients). Over the limit: 429
 * `RATE_LIMITED` problem+json with `Retry-After` in seconds; every limited response carries `X-RateLimit-*`.
 * The client IP is the socket's peer address (no proxy headers are trusted).
 * Register before the routes: the limit is attached to each route as it is added.
 */
export async function registerRateLimit(app: FastifyInstance, api: Config["api"]): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: api.rateLimitPerMinute,
    timeWindow: 60_000,
    keyGenerator: rateLimitKey,
    allowList: (request) => isRateLimitExempt(request.routeOptions.url),
    errorResponseBuilder: (_request, context) =>
      new ApiError(
        "RATE_LIMITED",
        `more than ${context.max} requests per minute from this address; retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} s`,
      ),
  });
}
