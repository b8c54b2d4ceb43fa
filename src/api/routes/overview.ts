import { tokensByAddress } from "../../config/tokensByAddress.ts";
import type { Common } from "../../internal/common.ts";
import {
  type GlobalCounts,
  getAllProtocolCounts,
  getGlobalCounts,
  type ProtocolCounts,
} from "../../store/statsReads.ts";
import { getRecentTransactions } from "../../store/transactionReads.ts";
import type { RouteApp, RouteDeps } from "../appDeps.ts";
import { cachedReply } from "../cache/cachedReply.ts";
import { createEventCache, readThrough } from "../cache/createEventCache.ts";
import { PRICE_HISTORY_CHANGES } from "../cache/priceHistoryChanges.ts";
import { createIndexerProgress } from "../createIndexerProgress.ts";
import { OverviewSchema } from "../schemas/stats.ts";
import type { TransactionJson } from "../schemas/transaction.ts";
import { toProtocolStatsJson } from "../toProtocolStatsJson.ts";
import { toTransactionsJson } from "../toTransactionJson.ts";

const LATEST = 5;

/**
 * `GET /api/overview` (SPEC §4 row 10): every configured protocol with its figures, the global totals, the
 * five newest transactions and the indexer's progress. Every part is a key read or a five-row index read,
 * except the USD figures, which come from the USD statistics (computed at most every few seconds).
 */
export function registerOverviewRoutes(app: RouteApp, common: Common, deps: RouteDeps) {
  const db = deps.database.db;
  // Counters kept by triggers on transactions, transfers and parties, and the newest transactions: all change
  // only with a stored or removed transaction, so they are kept until the next event.
  const cacheOptions = { maxEntries: 1, emptiedBy: "any" } as const;
  const protocolCounts = createEventCache<Map<string, ProtocolCounts>>(app, deps.events, cacheOptions);
  const globalCounts = createEventCache<GlobalCounts>(app, deps.events, cacheOptions);
  // USD values at block time: price history changes empty the latest transactions and the bodies too.
  const valued = { ...cacheOptions, alsoChangedBy: { notices: deps.changes, tables: PRICE_HISTORY_CHANGES } };
  const latestTransactions = createEventCache<TransactionJson[]>(app, deps.events, valued);
  // The serialized body (12 KB: serializing it was a fifth of a request), a few kept: one per figures.
  const bodies = createEventCache(app, deps.events, { ...valued, maxEntries: 4 });
  const tokens = tokensByAddress(common.config);
  const indexerProgress = createIndexerProgress(app, deps);

  app.get(
    "/api/overview",
    {
      schema: {
        operationId: "getOverview",
        summary: "Protocols with their statistics, totals, the latest transactions and indexer progress",
        tags: ["stats"],
        response: { 200: OverviewSchema },
      },
    },
    async (_request, reply) => {
      const since = bodies?.version();
      const [counts, totals, latest, indexer, usd] = await Promise.all([
        readThrough(protocolCounts, "all", () => getAllProtocolCounts(db)),
        readThrough(globalCounts, "all", () => getGlobalCounts(db)),
        readThrough(latestTransactions, "all", async () =>
          toTransactionsJson(
            await getRecentTransactions(db, { limit: LATEST }),
            tokens,
            deps.valueTransactions,
          ),
        ),
        indexerProgress(),
        deps.usdStats.figures(),
      ]);
      // The body is made of the event-cached parts and of the USD figures and the indexer's progress, which
      // change on their own clocks: kept per (figures, progress) until the next event.
      const key = `${usd.at.getTime()} ${JSON.stringify(indexer)}`;
      return cachedReply(
        reply,
        bodies,
        key,
        async () => ({
          protocols: common.config.protocols.map((p) => ({
            id: p.id,
            name: p.name,
            ...toProtocolStatsJson(counts.get(p.id), usd.protocols.get(p.id), usd.at),
          })),
          totals: {
            transactions: totals.transactions,
            tokenTransfers: totals.tokenTransfers,
            addresses: totals.addresses,
            tokens: common.config.tokens.length,
          },
          latestTransactions: latest,
          indexer,
        }),
        { since },
      );
    },
  );
}
