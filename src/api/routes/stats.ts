import type { Common } from "../../internal/common.ts";
import { type GlobalCounts, getGlobalCounts } from "../../store/statsReads.ts";
import type { RouteApp, RouteDeps } from "../appDeps.ts";
import type { CachedBody } from "../cache/cachedBody.ts";
import { cachedReply } from "../cache/cachedReply.ts";
import { createEventCache, readThrough } from "../cache/createEventCache.ts";
import { createHistoryCache, historyBodyKey, historyKey } from "../cache/historyCache.ts";
import { createIndexerProgress } from "../createIndexerProgress.ts";
import { HistoryQuerySchema, parseHistoryRange } from "../historyRange.ts";
import { ProblemSchema } from "../schemas/common.ts";
import { GlobalHistorySchema } from "../schemas/history.ts";
import { StatsSchema } from "../schemas/stats.ts";

/**
 * `GET /api/stats` (SPEC §4 row 11). Totals are the maintained counters (`protocol_stats`, `token_stats`,
 * `stat_counters`); `last24h` comes from the USD statistics (`src/stats/createUsdStats.ts`, computed at most
 * every 5 s and shared by concurrent requests): the transactions stored with a block time in the trailing
 * 24 hours, and `volumeUsd`, the sum of every protocol's `dailyVolume` over the same window (a transaction
 * belongs to one protocol, so nothing is counted twice; see docs/prices.md). `GET /api/stats/history`
 * (SPEC §10.3): every protocol together per bucket, from the history roll-ups.
 */
export function registerStatsRoutes(app: RouteApp, common: Common, deps: RouteDeps) {
  const db = deps.database.db;
  // The totals are trigger-kept counters on transactions, transfers and parties: kept until the next event.
  const counts = createEventCache<GlobalCounts>(app, deps.events, { maxEntries: 1, emptiedBy: "any" });
  const indexerProgress = createIndexerProgress(app, deps);
  const historyCache = createHistoryCache(app, deps);
  const historyBodies = createHistoryCache<CachedBody>(app, deps);

  app.get(
    "/api/stats",
    {
      schema: {
        operationId: "getStats",
        summary: "Global statistics and indexer progress",
        tags: ["stats"],
        response: { 200: StatsSchema },
      },
    },
    async () => {
      const [totals, usd, indexer] = await Promise.all([
        readThrough(counts, "global", () => getGlobalCounts(db)),
        deps.usdStats.figures(),
        indexerProgress(),
      ]);
      return {
        totalTransactions: totals.transactions,
        totalTokenTransfers: totals.tokenTransfers,
        uniqueAddresses: totals.addresses,
        trackedTokens: common.config.tokens.length,
        protocols: common.config.protocols.length,
        last24h: usd.last24h,
        indexer,
      };
    },
  );

  app.get(
    "/api/stats/history",
    {
      schema: {
        operationId: "getStatsHistory",
        summary: "Transactions, users and USD volume of every protocol together per hour or day",
        tags: ["stats"],
        querystring: HistoryQuerySchema,
        response: { 200: GlobalHistorySchema, 400: ProblemSchema },
      },
    },
    async (request, reply) => {
      const range = parseHistoryRange(request.query, new Date());
      return cachedReply(reply, historyBodies, historyBodyKey(request.url, range), async () => {
        const points = await readThrough(historyCache, historyKey("", range), () =>
          deps.timeSeries.points({
            protocol: null,
            span: range.interval,
            from: range.from,
            to: range.to,
          }),
        );
        return {
          interval: range.interval,
          from: range.from.toISOString(),
          to: range.to.toISOString(),
          points: points.map((p) => ({
            time: p.time.toISOString(),
            transactionCount: p.transactionCount,
            uniqueUsers: p.uniqueUsers,
            volumeUsd: p.volumeUsd,
          })),
        };
      });
    },
  );
}
