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
  /** the value kept for `key`, else `read()`'s, kept (with `version`/`set`, so a racing event wins) */
  through(key: string, read: () => Promise<V>): Promise<V>;
  /** drop every body (something they were made from changed) */
  invalidate(): void;
  stats(): { entries: number; hits: number; misses: number };
};

export type ResponseCacheOptions = {
  /** bodies kept at most; past it the oldest is dropped */
  maxEntries: number;
  /**
   * a body older than this is read again even without an event (default 10 minutes): a bound on what a lost
   * event could leave behind, below the 15 minutes the PostgreSQL fan-out keeps events for a listener that
   * reconnects (docs/operations.md)
   */
  maxAgeMs?: number;
  /** clock in ms (tests) */
  now?: () => number;
};

export const DEFAULT_MAX_AGE_MS = 10 * 60_000;

export function createResponseCache<V = string>(options: ResponseCacheOptions): ResponseCache<V> {
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  const now = options.now ?? Date.now;
  const bodies = new Map<string, { body: V; at: number }>();
  let generation = 0;
  let hits = 0;
  let misses = 0;
  const cache: ResponseCache<V> = {
    get(key) {
      const entry = bodies.get(key);
      if (entry === undefined || now() - entry.at > maxAgeMs) {
        misses++;
        return undefined;
      }
      hits++;
      return entry.body;
    },
    version: () => generation,
    set(key, body, version) {
      if (version !== generation) return;
      if (!bodies.has(key) && bodies.size >= options.maxEntries) {
        const oldest = bodies.keys().next();
        if (!oldest.done) bodies.delete(oldest.value);
      }
      bodies.delete(key); // re-inserted last: the oldest entry stays first in the Map's order
      bodies.set(key, { body, at: now() });
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
      bodies.clear();
    },
    stats: () => ({ entries: bodies.size, hits, misses }),
  };
  return cache;
}
