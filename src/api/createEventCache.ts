import type { FastifyInstance } from "fastify";
import type { HubEvent, HubSource } from "../realtime/createHub.ts";
import { createResponseCache, type ResponseCache } from "./createResponseCache.ts";

export type EventCacheOptions = {
  /** bodies kept at most */
  maxEntries: number;
  /** which events empty it: every stored or removed transaction, or only removed ones */
  emptiedBy: "any" | "removed";
};

/**
 * A response cache emptied by the ingest events of this process (`AppDeps.events`: the in-process broadcaster
 * on PGlite, the PostgreSQL fan-out on a replica), unsubscribed when the app closes. Only for answers that
 * nothing but a commit or a rollback changes — transactions, their logs and transfers, the lists cut from
 * them, and the counters triggers keep on those rows — since those are exactly what the events announce (not
 * token balances: call-mode balances are refreshed without an event). null without events: no cache.
 */
export function createEventCache<V = string>(
  app: FastifyInstance,
  events: HubSource | undefined,
  options: EventCacheOptions,
): ResponseCache<V> | null {
  if (!events) return null;
  const cache = createResponseCache<V>({ maxEntries: options.maxEntries });
  const unsubscribe = events.subscribe((event: HubEvent) => {
    if (options.emptiedBy === "any" || event.type === "removed") cache.invalidate();
  });
  app.addHook("onClose", async () => unsubscribe());
  return cache;
}

/** `cache.through(key, read)`, or just `read()` when there is no cache (no events). */
export function readThrough<V>(
  cache: ResponseCache<V> | null,
  key: string,
  read: () => Promise<V>,
): Promise<V> {
  return cache ? cache.through(key, read) : read();
}
