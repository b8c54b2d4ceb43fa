import cors from "@fastify/cors";
import type { FastifyInstance } from "fastify";
import type { Config } from "../../config/schema.ts";

/** Response headers a browser script may read: rate-limit state and the request id for support. */
const EXPOSED_HEADERS = [
  "Retry-After",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "X-Request-Id",
];

/**
 * CORS from `api.corsOrigins` (SPEC §1 config): `["*"]` allows any origin, otherwise the exact origins listed
 * (`https://app.example.org`). Preflights are answered for every path; a preflight without the CORS request
 * headers is answered too (not rejected with Fastify's plain-text 400), so every 4xx stays problem+json.
 */
export async function registerCors(app: FastifyInstance, api: Config["api"]): Promise<void> {
  const anyOrigin = api.corsOrigins.includes("*");
  await app.register(cors, {
    origin: anyOrigin ? "*" : api.corsOrigins,
    methods: ["GET", "HEAD", "POST", "OPTIONS"],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    strictPreflight: false,
  });
}
