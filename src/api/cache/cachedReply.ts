import type { FastifyReply } from "fastify";
import type { ResponseCache } from "./createResponseCache.ts";

/** The Content-Type Fastify gives a serialized object: a cached body is sent with the same one. */
const JSON_TYPE = "application/json; charset=utf-8";

/**
 * Answer from `cache` when it holds `key`; else `read()`, serialize the result with the route's response
 * schema (as Fastify would), keep it and send it. Without a cache, `read()`'s result is returned as usual.
 * Errors thrown by `read` (404s, 400s) reach the error handler and are never kept.
 *
 * Bodies are kept as UTF-8 bytes: a string would be encoded again on every send, which for a 50 KB page
 * costs more than everything else a hit does. When the key or the body is made from values read before the
 * call, pass the `cache.version()` taken before those reads as `since`, so that an event during them wins.
 */
export async function cachedReply<T>(
  reply: FastifyReply,
  cache: ResponseCache<Buffer> | null,
  key: string,
  read: () => Promise<T>,
  since?: number,
): Promise<T | FastifyReply> {
  if (!cache) return read();
  const hit = cache.get(key);
  if (hit !== undefined) return reply.type(JSON_TYPE).send(hit);
  const version = since ?? cache.version();
  const body = ownedBytes(String(reply.serialize(await read())));
  cache.set(key, body, version);
  return reply.type(JSON_TYPE).send(body);
}

/**
 * `text` as UTF-8 in a buffer of its own. `Buffer.from` places a text under 4 KB (a transaction) in a shared
 * 8 KB slab, which a kept slice holds whole: a cache bounded by its bodies' bytes would hold up to four times
 * more.
 */
function ownedBytes(text: string): Buffer {
  const body = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  body.write(text);
  return body;
}
