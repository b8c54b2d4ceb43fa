import { cachedBodyBytes, isCachedBody } from "./cachedBody.ts";

/**
 * Serialized response bodies (or parts of responses) of reads whose answer only a stored or removed
 * transaction can change (a transaction by hash, transaction and event lists, the counters the triggers keep
 * on those rows), kept until the event that changes them: the caller
 * subscribes to the events of the ingest pipeline (in process on PGlite, the PostgreSQL fan-out on a
 * replica) and calls `invalidate`. A hit costs a Map lookup instead of a database statement and a
 * serialization; the answer is the one the database would give, as of the last event this process saw
 * (the same view its WebSocket clients have).
 *
 * A read races the event that invalidates it: it may read the rows before a commit and finish after the
 * commit's event has emptied the cache. `version()` before the read and `set(…, version)` after it drops
 * such a body instead of keeping it past the event.
 */
export type ResponseCache<V = string> = {
  /** the body (or value) kept for `key`, if any */
  get(key: string): V | undefined;
  /** take before reading what a body is made from, and hand it to `set` */
  version(): number;
  /** keep `body` for `key`, unless the cache was invalidated after `version` was taken */
  set(key: string, body: V, version: number): void;
  /**
   * put `body` (the same answer in another form, e.g. with its compressed bytes added) in place of the kept
   * `previous` of `key`, keeping its age and recounting its bytes; nothing when `key` no longer holds
   * `previous` (emptied or replaced meanwhile) or when `body` alone is over `maxBytes`
   */
  replace(key: string, previous: V, body: V): void;
  /** the value kept for `key`, else `read()`'s, kept (with `version`/`set`, so a racing event wins) */
  through(key: string, read: () => Promise<V>): Promise<V>;
  /** drop every body (something they were made from changed) */
  invalidate(): void;
  /** `bytes`: what `maxBytes` counts (0 without it) */
  stats(): { entries: number; hits: number; misses: number; bytes: number };
};

export type ResponseCacheOptions<V> = {
  /** bodies kept at most; past it the least recently used is dropped */
  maxEntries: number;
  /**
   * bytes kept at most, each entry counted as `sizeOf(body)` plus its key and `ENTRY_OVERHEAD_BYTES`; past
   * it the least recently used are dropped, and a body larger than it all is not kept (default: no bound)
   */
  maxBytes?: number;
  /** the bytes `body` holds (default: a Buffer's length, a string's UTF-16 size, else 0) */
  sizeOf?: (body: V) => number;
  /**
   * a body older than this is read again even without an event (default 10 minutes): a bound on what a lost
   * event could leave behind, below the 15 minutes the PostgreSQL fan-out keeps events for a listener that
   * reconnects (docs/operations.md)
   */
  maxAgeMs?: number;
  /**
   * keep a body only for a key that already missed once among the last `doorkeeper` distinct keys that did
   * (default: keep every body). A key asked for once — a crawler walking every transaction, a link opened by
   * one person — then never evicts the bodies that are asked for again, nor churns the heap: its body is
   * built, sent and dropped. The second read of a key is the price. The remembered keys are forgotten all at
   * once when there are `doorkeeper` of them (TinyLFU's doorkeeper, reset instead of aged).
   */
  doorkeeper?: number;
  /** clock in ms (tests) */
  now?: () => number;
};

export const DEFAULT_MAX_AGE_MS = 10 * 60_000;

/** What an entry costs beyond its body and key: the Map slot, the entry object, a Buffer's own object. */
export const ENTRY_OVERHEAD_BYTES = 160;

/**
 * Default `sizeOf`: the bytes of a Buffer or of a `CachedBody` (both its forms), two per UTF-16 unit of a
 * string, nothing for other values.
 */
function defaultSizeOf(body: unknown): number {
  if (Buffer.isBuffer(body)) return body.length;
  if (isCachedBody(body)) return cachedBodyBytes(body);
  return typeof body === "string" ? body.length * 2 : 0;
}

export function createResponseCache<V = string>(options: ResponseCacheOptions<V>): ResponseCache<V> {
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const sizeOf = options.sizeOf ?? defaultSizeOf;
  const now = options.now ?? Date.now;
  // In least-recently-used order: a hit or a set moves its entry last, so the first is the one to drop.
  const bodies = new Map<string, { body: V; at: number; bytes: number }>();
  let bytes = 0;
  let generation = 0;
  let hits = 0;
  let misses = 0;
  /** keys whose body was not kept yet (`doorkeeper`) */
  const knocked = new Set<string>();
  /** whether to keep `key`'s body now: always without a doorkeeper, else on the key's second miss */
  const admits = (key: string) => {
    if (options.doorkeeper === undefined || knocked.delete(key)) return true;
    if (knocked.size >= options.doorkeeper) knocked.clear();
    knocked.add(key);
    return false;
  };
  const drop = (key: string) => {
    const entry = bodies.get(key);
    if (entry === undefined) return;
    bodies.delete(key);
    bytes -= entry.bytes;
  };
  const cache: ResponseCache<V> = {
    get(key) {
      const entry = bodies.get(key);
      if (entry === undefined || now() - entry.at > maxAgeMs) {
        misses++;
        return undefined;
      }
      hits++;
      bodies.delete(key);
      bodies.set(key, entry);
      return entry.body;
    },
    version: () => generation,
    set(key, body, version) {
      if (version !== generation) return;
      if (!bodies.has(key) && !admits(key)) return;
      drop(key);
      const size = options.maxBytes === undefined ? 0 : sizeOf(body) + key.length * 2 + ENTRY_OVERHEAD_BYTES;
      if (size > maxBytes) return;
      while (bodies.size > 0 && (bodies.size >= options.maxEntries || bytes + size > maxBytes)) {
        drop(bodies.keys().next().value as string);
      }
      bodies.set(key, { body, at: now(), bytes: size });
      bytes += size;
    },
    replace(key, previous, body) {
      const entry = bodies.get(key);
      if (entry === undefined || entry.body !== previous) return;
      const size = options.maxBytes === undefined ? 0 : sizeOf(body) + key.length * 2 + ENTRY_OVERHEAD_BYTES;
      if (size > maxBytes) return;
      bytes += size - entry.bytes;
      entry.body = body;
      entry.bytes = size;
      for (const other of bodies.keys()) {
        if (bytes <= maxBytes) break;
        if (other !== key) drop(other);
      }
    },
    async through(key, read) {
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
      const version = generation;
      const value = await read();
      cache.set(key, value, version);
      return value;
    },
    invalidate() {
      generation++;
      // Map#clear allocates a new table even for an empty map, and a backfill invalidates every cache once
      // per stored transaction: most of the time there is nothing to drop.
      if (bodies.size > 0) bodies.clear();
      bytes = 0;
    },
    stats: () => ({ entries: bodies.size, hits, misses, bytes }),
  };
  return cache;
}
