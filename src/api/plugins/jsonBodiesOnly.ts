import type { FastifyInstance } from "fastify";

/**
 * Accept request bodies as `application/json` only (SPEC §8): Fastify also parses `text/plain` by default,
 * which would reach a JSON endpoint as a string and fail validation with 400; without that parser every
 * non-JSON body, like one without a content type, is refused with 415 `UNSUPPORTED_MEDIA_TYPE` before any
 * handler runs. Bodies on GET and HEAD are ignored by Fastify.
 */
export function acceptJsonBodiesOnly(app: FastifyInstance): void {
  app.removeContentTypeParser("text/plain");
}
