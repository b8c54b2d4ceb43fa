import { readFile } from "node:fs/promises";
import { join } from "node:path";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { REPO_ROOT } from "../../internal/repoRoot.ts";
import { ApiError } from "../errorRegistry.ts";
import { openApiOptions } from "../openapi.ts";

/** The interactive reference loads only what this server serves (no CDN), which the browser enforces too. */
const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
].join("; ");

const ERRORS_DOC = join(REPO_ROOT, "docs", "errors.md");

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document generated from the route schemas (@fastify/swagger; see
 * `openApiOptions`); `GET /docs`: Swagger UI served from node_modules (@fastify/swagger-ui, which also serves
 * the document at `/docs/json`); `GET /docs/errors`: docs/errors.md, the target of every problem's `type`.
 * Register before the routes: the document is collected as routes are added.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, openApiOptions());
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    staticCSP: DOCS_CSP,
    theme: { title: "protoscan API" },
    uiConfig: { deepLinking: true, displayOperationId: true, defaultModelsExpandDepth: 1 },
  });

  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());

  let errorsDoc: Promise<string> | undefined;
  app.get("/docs/errors", { schema: { hide: true } }, async (_request, reply) => {
    errorsDoc ??= readFile(ERRORS_DOC, "utf8");
    const text = await errorsDoc.catch(() => {
      errorsDoc = undefined;
      throw new ApiError("NOT_FOUND", "the error documentation is not installed with this server");
    });
    return reply.type("text/markdown; charset=utf-8").send(text);
  });
}
