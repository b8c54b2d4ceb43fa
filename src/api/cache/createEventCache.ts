import type { FastifyInstance } from "fastify";
import type { HubEvent, HubSource } from "../../realtime/createHub.ts";
import type { ChangeNotices, NotifiedTable } from "../../store/changeNotices.ts";
import type { CachedBody } from "./cachedBody.ts";
import { createResponseCache, type ResponseCache } from "./createResponseCache.ts";

export type EventCacheOptions = {
  /** bodies kept at most */
  maxEntries: number;
  /** bytes kept at most (`ResponseCacheOptions.maxBytes`): the bound for bodies of unbounded variety */
  maxBytes?: number;
  /** keep a body only on its key's second miss (`ResponseCacheOptions.doorkeeper`) */
  doorkeeper?: number;
  /** which events empty it: every stored or removed transaction, or only removed ones */
  emptiedBy: "any" | "removed";
  /**
   * the tables, besides transactions, the cached answers are made from that change without an ingest event
   * (call-mode balance refreshes, the cursor over empty blocks): their change notices (migration 0009,
   * `store/changeNotices.ts`) empty the cache too, and while the notices are not heard nothing is cached
   */
  alsoChangedBy?: { notices: ChangeNotices | undefined; tables: readonly NotifiedTable[] };
};

/**
 * A response cache emptied by the ingest events of this process (`AppDeps.events`: the in-process broadcaster
 * on PGlite, the PostgreSQL fan-out on a replica), unsubscribed when the app closes. For answers that only a
 * commit or a rollback changes — transactions, their logs and transfers, the lists cut from them, and the
 * counters triggers keep on those rows — since those are exactly what the events announce; with
 * `alsoChangedBy`, also for answers made from token balances or the cursor, which the change notices announce.
 * null without events (or without the notices `alsoChangedBy` asks for): no cache. By default the values are
 * response bodies as bytes (`CachedBody`, `cachedReply`).
 */
export function createEventCache<V = CachedBody>(
  app: FastifyInstance,
  events: HubSource | undefined,
  options: EventCacheOptions,
): ResponseCache<V> | null {
  if (!events) return null;
  const changes = options.alsoChangedBy;
  if (changes && !changes.notices) return null;
  const cache = createResponseCache<V>({
    maxEntries: options.maxEntries,
    ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
    ...(options.doorkeeper === undefined ? {} : { doorkeeper: options.doorkeeper }),
  });
  const unsubscribe = events.subscribe((event: HubEvent) => {
    if (options.emptiedBy === "any" || event.type === "removed") cache.invalidate();
  });
  app.addHook("onClose", async () => unsubscribe());
  if (!changes?.notices) return cache;

  const { notices, tables } = changes;
  const stopHearing = notices.subscribe((notice) => {
    if (notice === "*" || tables.includes(notice)) cache.invalidate();
  });
  app.addHook("onClose", async () => stopHearing());
  // While notices may be missed (a PostgreSQL LISTEN session being replaced), answer from the database.
  return {
    ...cache,
    get: (key) => (notices.listening() ? cache.get(key) : undefined),
    set: (key, body, version) => {
      if (notices.listening()) cache.set(key, body, version);
    },
    async through(key, read) {
      if (!notices.listening()) return read();
      return cache.through(key, read);
    },
  };
}

/** `cache.through(key, read)`, or just `read()` when there is no cache (no events). */
export function readThrough<V>(
  cache: ResponseCache<V> | null,
  key: string,
  read: () => Promise<V>,
): Promise<V> {
  return cache ? cache.through(key, read) : read();
}
