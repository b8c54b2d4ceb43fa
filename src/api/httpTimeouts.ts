/**
 * Socket timeouts (docs/operations.md, "HTTP timeouts"), so that slow or silent clients (slow-loris) cannot
 * hold connections forever. Fastify leaves `requestTimeout` and `connectionTimeout` off by default.
 * - `headersTimeout`: the request line and headers must arrive within 10 s of the request's start;
 * - `requestTimeout`: the whole request, body included, within 30 s (answered 408 `REQUEST_TIMEOUT`);
 * - `connectionTimeout`: a socket with no activity for 60 s is closed (e.g. a client that stops reading);
 * - `keepAliveTimeout`: an idle keep-alive connection is closed after 72 s, longer than the 60 s idle
 *   timeout of common load balancers, so the balancer closes first and never reuses a closed connection.
 * Node checks the first two every `connectionsCheckingInterval` (default 30 s: 2 s here, so they hold).
 * WebSocket connections are not affected once upgraded (`ws` clears the socket timeout; pings keep them).
 */
export const HTTP_TIMEOUTS = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  connectionTimeout: 60_000,
  keepAliveTimeout: 72_000,
  connectionsCheckingInterval: 2_000,
} as const;

/** HTTP_TIMEOUTS as Fastify server options: every listener protoscan opens (the API, an indexer's ops). */
export const HTTP_TIMEOUT_OPTIONS = {
  requestTimeout: HTTP_TIMEOUTS.requestTimeout,
  connectionTimeout: HTTP_TIMEOUTS.connectionTimeout,
  keepAliveTimeout: HTTP_TIMEOUTS.keepAliveTimeout,
  http: {
    headersTimeout: HTTP_TIMEOUTS.headersTimeout,
    connectionsCheckingInterval: HTTP_TIMEOUTS.connectionsCheckingInterval,
  },
} as const;
