import { join } from "node:path";
import { errorCodes, type FastifyReply, type FastifyRequest } from "fastify";
import Type from "typebox";
import type { Common } from "../../internal/common.ts";
import { REPO_ROOT } from "../../internal/repoRoot.ts";
import type { RouteApp } from "../appDeps.ts";
import { createTokenLogos } from "../createTokenLogos.ts";
import { createRouteIndex } from "../plugins/routeIndex.ts";
import { loadWebAssets, pickEncoding, type WebAsset } from "../webAssets.ts";

/** Where `npm install` (scripts/buildWeb.js) writes the built explorer. */
export const WEB_ROOT = join(REPO_ROOT, "dist", "web");

/**
 * The explorer's pages may run scripts and load styles, images and data from this origin only (SPEC §12):
 * no inline script, no eval, no other origin. `connect-src 'self'` covers the same-origin WebSocket.
 */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join("; ");

/** A logo fetched from elsewhere is an image, never a page: opened on its own it can run nothing. */
const LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/**
 * Any text is an address to look up: an unknown or malformed one is a 404 (problem+json) like any missing
 * file, not a 400.
 */
const LogoParams = Type.Object({ address: Type.String() });

/** Fastify's default `maxParamLength`. */
const MAX_PARAM_LENGTH = 100;

/** Paths the explorer never takes (SPEC §12): the API, the Etherscan API, the socket, docs and operations. */
export function isReservedPath(path: string): boolean {
  return (
    /^\/(api|v2\/api|ws|docs)(\/|$)/.test(path) ||
    /^\/(openapi\.json|healthz|readyz|metrics)(\/|$)/.test(path)
  );
}

/**
 * Serve the web explorer (SPEC §12) from the same process: `/assets/*` (content-hashed names, cached for a
 * year, brotli or gzip as built), `/logos/:address` (a tracked token's logo from this origin) and `index.html`
 * (never cached) for every other GET path, so that deep links load the app, which shows its own not-found
 * page for unknown ones. Reserved paths and paths registered for another method go on to the problem+json
 * not-found handler unchanged. Off with `ui.enabled: false`. Register before the routes: it indexes them.
 */
export function registerWebApp(app: RouteApp, common: Common, options: { root?: string } = {}): void {
  if (common.config.ui?.enabled === false) return;
  const routes = createRouteIndex(app);
  const root = options.root ?? WEB_ROOT;
  const logger = common.logger.child({ module: "web" });
  let assets = loadWebAssets(root);
  if (!assets) logger.warn({ root }, "the web explorer is not built (npm run build); / answers 404");
  const logos = createTokenLogos(common.config.tokens, logger);
  const noRateLimit = { rateLimit: false };

  const send = (request: FastifyRequest, reply: FastifyReply, asset: WebAsset, cache: string) => {
    const { body, encoding } = pickEncoding(asset, request.headers["accept-encoding"]);
    reply
      .header("content-type", asset.contentType)
      .header("cache-control", cache)
      .header("vary", "accept-encoding")
      .header("x-content-type-options", "nosniff");
    if (encoding) reply.header("content-encoding", encoding);
    return reply.send(body);
  };

  app.get("/assets/*", { schema: { hide: true }, config: noRateLimit }, async (request, reply) => {
    const path = request.url.split("?")[0]!;
    const asset = assets?.files.get(path);
    if (!asset) return reply.callNotFound();
    return send(request, reply, asset, asset.immutable ? "public, max-age=31536000, immutable" : "no-cache");
  });

  const logoSchema = { hide: true, params: LogoParams };
  app.get("/logos/:address", { schema: logoSchema, config: noRateLimit }, async (request, reply) => {
    const logo = await logos.get(request.params.address);
    if (!logo) return reply.callNotFound();
    return reply
      .header("content-type", logo.contentType)
      .header("cache-control", "public, max-age=3600")
      .header("content-security-policy", LOGO_CSP)
      .header("x-content-type-options", "nosniff")
      .send(logo.body);
  });

  app.get("/*", { schema: { hide: true }, config: noRateLimit }, async (request, reply) => {
    const path = request.url.split("?")[0]!;
    if (isReservedPath(path) || path.startsWith("/assets/") || routes.allowedMethods(path).length > 0) {
      // Without this route the router refuses an over-long parameter itself; this route must not hide that.
      if (path.split("/").some((segment) => segment.length > MAX_PARAM_LENGTH)) {
        throw new errorCodes.FST_ERR_MAX_PARAM_LENGTH(path.slice(0, 200));
      }
      return reply.callNotFound();
    }
    // Built after the server started (a test, `npm run build` beside a running demo): looked for again.
    assets ??= loadWebAssets(root);
    if (!assets) return reply.callNotFound();
    reply
      .header("content-security-policy", APP_CSP)
      .header("referrer-policy", "no-referrer")
      .header("x-frame-options", "SAMEORIGIN");
    return send(request, reply, assets.index, "no-cache");
  });
}
