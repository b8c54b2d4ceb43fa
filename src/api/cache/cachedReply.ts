import type { FastifyReply } from "fastify";
import { acceptsGzip } from "../acceptEncoding.ts";
import { type CachedBody, COMPRESS_MIN_BYTES, GZIP_LEVEL, gzipBytes } from "./cachedBody.ts";
import type { ResponseCache } from "./createResponseCache.ts";

/** The Content-Type Fastify gives a serialized object: a cached body is sent with the same one. */
const JSON_TYPE = "application/json; charset=utf-8";

/**
 * Answer from `cache` when it holds `key`; else `read()`, serialize the result with the route's response
 * schema (as Fastify would; `options.serialize` when given), keep it and send it. Without a cache, `read()`'s
 * result is returned as usual, or sent as `options.serialize` writes it when given. Errors thrown by `read`
 * (404s, 400s) reach the error handler and are never kept.
 *
 * Bodies are kept as UTF-8 bytes: a string would be encoded again on every send, which for a 50 KB page
 * costs more than everything else a hit does. When the key or the body is made from values read before the
 * call, pass the `cache.version()` taken before those reads as `options.since`, so that an event during them
 * wins. `options.serialize` is for a route whose result is built in its schema's exact shape, where a plain
 * `JSON.stringify` writes the same bytes as the compiled schema serializer, faster (transactions.ts).
 *
 * A body of `COMPRESS_MIN_BYTES` or more is sent with `Vary: Accept-Encoding`, gzipped when the request
 * accepts gzip: compressed on the first such request (on the thread pool, concurrent ones waiting for the
 * same compression) and kept with the entry, so that later ones send the kept bytes.
 */
export async function cachedReply<T>(
  reply: FastifyReply,
  cache: ResponseCache<CachedBody> | null,
  key: string,
  read: () => Promise<T>,
  options: { since?: number | undefined; serialize?: (value: T) => string } = {},
): Promise<T | FastifyReply> {
  if (!cache) {
    if (!options.serialize) return read();
    // The same writer as the cached body's, so that an answer does not depend on whether a cache is on.
    const text = options.serialize(await read());
    return reply.type(JSON_TYPE).send(text);
  }
  const hit = cache.get(key);
  if (hit !== undefined) return sendBody(reply, cache, key, hit);
  const version = options.since ?? cache.version();
  const value = await read();
  const text = options.serialize ? options.serialize(value) : String(reply.serialize(value));
  const body: CachedBody = { identity: ownedBytes(text) };
  cache.set(key, body, version);
  return sendBody(reply, cache, key, body);
}

function sendBody(
  reply: FastifyReply,
  cache: ResponseCache<CachedBody>,
  key: string,
  body: CachedBody,
): FastifyReply | Promise<FastifyReply> {
  reply.type(JSON_TYPE);
  if (body.identity.length < COMPRESS_MIN_BYTES) return reply.send(body.identity);
  varyOnAcceptEncoding(reply);
  if (!acceptsGzip(reply.request.headers["accept-encoding"])) return reply.send(body.identity);
  if (body.gzip) return reply.header("content-encoding", "gzip").send(body.gzip);
  return gzipOf(cache, key, body).then((gzipped) =>
    gzipped ? reply.header("content-encoding", "gzip").send(gzipped) : reply.send(body.identity),
  );
}

/** The compressions under way or done, by body: requests arriving meanwhile wait for the same one. */
const compressions = new WeakMap<CachedBody, Promise<Buffer | null>>();

/**
 * `body.identity` gzipped, kept in the entry of `key` when that still holds `body` (not when an event emptied
 * the cache or a newer body replaced it meanwhile). null when zlib fails: the body is sent as it is.
 */
function gzipOf(cache: ResponseCache<CachedBody>, key: string, body: CachedBody): Promise<Buffer | null> {
  let compression = compressions.get(body);
  if (compression === undefined) {
    compression = gzipBytes(body.identity, { level: GZIP_LEVEL }).then(
      (compressed) => {
        const gzip = ownedCopy(compressed);
        cache.replace(key, body, { identity: body.identity, gzip });
        return gzip;
      },
      () => {
        compressions.delete(body);
        return null;
      },
    );
    compressions.set(body, compression);
  }
  return compression;
}

/** Add `Accept-Encoding` to the reply's `Vary` (CORS may have set `Vary: Origin` already). */
function varyOnAcceptEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader("vary");
  if (vary === undefined) reply.header("vary", "Accept-Encoding");
  else if (!/accept-encoding/i.test(String(vary))) reply.header("vary", `${String(vary)}, Accept-Encoding`);
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

/** `bytes` in a buffer of its own, for the same reason (zlib's output under 4 KB is a slice of a slab). */
function ownedCopy(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}
