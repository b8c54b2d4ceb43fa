import type { FastifyInstance } from "fastify";
import { ApiError } from "../errorRegistry.ts";

/**
 * Refuse a path or query parameter holding U+0000 (`%00`) with 400 `INVALID_PARAMETER` naming it, after
 * schema validation (so a malformed hash is still `INVALID_TX_HASH`) and before any handler. PostgreSQL
 * cannot compare text with it ("invalid byte sequence for encoding UTF8: 0x00"), so such a value would
 * otherwise reach the database as a query that fails; no stored value can contain it anyway
 * (internal/text.ts).
 */
export function rejectNulParameters(app: FastifyInstance): void {
  app.addHook("preHandler", async (request) => {
    const name = nulKey(request.params) ?? nulKey(request.query);
    if (name !== undefined) {
      throw new ApiError("INVALID_PARAMETER", `${name}: must not contain the character U+0000 (%00)`);
    }
  });
}

/** The first key of a parsed path or query whose name or value (or one of its repeated values) holds U+0000. */
function nulKey(values: unknown): string | undefined {
  if (values === null || typeof values !== "object") return undefined;
  for (const [key, value] of Object.entries(values)) {
    const texts = Array.isArray(value) ? value : [value];
    if (key.includes("\0") || texts.some((text) => typeof text === "string" && text.includes("\0"))) {
      return JSON.stringify(key).slice(1, -1);
    }
  }
  return undefined;
}
