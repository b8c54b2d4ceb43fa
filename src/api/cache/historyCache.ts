import type { FastifyInstance } from "fastify";
import type { HistoryPoint } from "../../stats/createTimeSeries.ts";
import type { RouteDeps } from "../appDeps.ts";
import type { HistoryRange } from "../historyRange.ts";
import { createEventCache } from "./createEventCache.ts";
import { PRICE_HISTORY_CHANGES } from "./priceHistoryChanges.ts";

/**
 * History points (SPEC §10.3) by protocol and bucket range, kept until the next stored or removed transaction
 * (new counts, transfers and pool prices) or the next write to price history: what they are computed from.
 * Points are keyed by the buckets, not by `from`/`to`, so the default range (`to` = now) hits until the hour
 * turns; serialized bodies (`createHistoryCache<CachedBody>`, keyed by `historyBodyKey`) by the range as asked.
 */
export function createHistoryCache<V = HistoryPoint[]>(app: FastifyInstance, deps: RouteDeps) {
  return createEventCache<V>(app, deps.events, {
    maxEntries: 1_000,
    emptiedBy: "any",
    alsoChangedBy: { notices: deps.changes, tables: PRICE_HISTORY_CHANGES },
  });
}

/** The cache key of a protocol's (`""`: all) points over a range. */
export function historyKey(protocol: string, range: HistoryRange): string {
  return `${protocol}|${range.interval}|${range.first}|${range.last}`;
}

/** The cache key of a serialized answer: the URL and the range it resolved to (`to` defaults to now). */
export function historyBodyKey(url: string, range: HistoryRange): string {
  return `${url}|${range.from.getTime()}|${range.to.getTime()}`;
}
