import { promisify } from "node:util";
import { gzip } from "node:zlib";

/**
 * A cached response body: its bytes as serialized, and, once a client that accepts gzip has asked for it, the
 * same bytes gzipped. Compressed once per cached body, never per request: every later gzip request of the
 * entry is sent the kept bytes. The response cache's byte bound counts both (`cachedBodyBytes`).
 */
export type CachedBody = {
  readonly identity: Buffer;
  readonly gzip?: Buffer;
};

/**
 * Bodies from this size on are sent gzipped to clients that accept it. Below it a body and its headers fit in
 * the first few TCP segments of the initial congestion window (10 segments, about 14 KB), so compressing saves
 * no round trip, only a kilobyte or so, while the kept gzip copy would take room from the byte-bounded caches
 * of small bodies (a transaction is about 2 KB; the tx cache holds 16 MiB of them).
 */
export const COMPRESS_MIN_BYTES = 4096;

/**
 * zlib's level for cached bodies (docs/performance.md, "Compression"): the bytes are compressed once and sent
 * many times, but a live chain empties the caches at every block, so each body is compressed again then.
 */
export const GZIP_LEVEL = 6;

export const gzipBytes = promisify(gzip);

/** The bytes a cached body holds, both forms together. */
export function cachedBodyBytes(body: CachedBody): number {
  return body.identity.length + (body.gzip?.length ?? 0);
}

/** Whether `value` is a `CachedBody` (for a cache's default size count). */
export function isCachedBody(value: unknown): value is CachedBody {
  return typeof value === "object" && value !== null && Buffer.isBuffer((value as CachedBody).identity);
}
