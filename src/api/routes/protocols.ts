import Type from "typebox";
import { getAddress } from "viem";
import type { ProtocolConfig } from "../../config/schema.ts";
import { tokensByAddress } from "../../config/tokensByAddress.ts";
import type { Common } from "../../internal/common.ts";
import { getProtocolTransactions } from "../../store/protocolReads.ts";
import { getProtocolCounts, type ProtocolCounts } from "../../store/statsReads.ts";
import type { RouteApp, RouteDeps } from "../appDeps.ts";
import type { CachedBody } from "../cache/cachedBody.ts";
import { cachedReply } from "../cache/cachedReply.ts";
import { createEventCache, readThrough } from "../cache/createEventCache.ts";
import { createHistoryCache, historyBodyKey, historyKey } from "../cache/historyCache.ts";
import { PRICE_HISTORY_CHANGES } from "../cache/priceHistoryChanges.ts";
import { ApiError } from "../errorRegistry.ts";
import { HistoryQuerySchema, parseHistoryRange } from "../historyRange.ts";
import { ListOffset, ProtocolTransactionsPageSchema } from "../schemas/address.ts";
import { Cursor, Limit, ProblemSchema } from "../schemas/common.ts";
import { ProtocolHistorySchema } from "../schemas/history.ts";
import { type ProtocolListJson, ProtocolListSchema } from "../schemas/protocol.ts";
import { ProtocolStatsSchema } from "../schemas/stats.ts";
import { toProtocolStatsJson } from "../toProtocolStatsJson.ts";
import { transactionPage, transactionPageArgs } from "../transactionPage.ts";

const ProtocolParams = Type.Object({
  protocolId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "protocol id from the configuration (case-insensitive)",
    examples: ["demoswap"],
  }),
});

/**
 * `GET /api/protocol/:protocolId/stats` and `/api/protocol/:protocolId/transactions` (SPEC §4 rows 8 and 9),
 * and `GET /api/protocols` (an addition: the configured protocols, their contracts' names and tokens).
 * Counts come from the maintained `protocol_stats` row, USD figures from the USD statistics (`src/stats/`),
 * pages from the protocol's transaction index (their bodies cached until the next stored or removed
 * transaction when `deps.events` is given). `/api/protocol/:protocolId/history` (SPEC §10.3) from the history
 * roll-ups (`src/stats/createTimeSeries.ts`).
 */
export function registerProtocolRoutes(app: RouteApp, common: Common, deps: RouteDeps) {
  const db = deps.database.db;
  const protocols = new Map(common.config.protocols.map((p) => [p.id, p]));
  const tokens = tokensByAddress(common.config);
  // Transaction pages hold USD values at block time: price history changes empty them too.
  const pages = createEventCache(app, deps.events, {
    maxEntries: 1_000,
    emptiedBy: "any",
    alsoChangedBy: { notices: deps.changes, tables: PRICE_HISTORY_CHANGES },
  });
  const historyCache = createHistoryCache(app, deps);
  const historyBodies = createHistoryCache<CachedBody>(app, deps);
  const countsCache = createEventCache<ProtocolCounts>(app, deps.events, {
    maxEntries: 1_000,
    emptiedBy: "any",
  });

  /** The configured protocol `id` (any case), else 404 PROTOCOL_NOT_FOUND. */
  const protocolOf = (id: string): ProtocolConfig => {
    const protocol = protocols.get(id.toLowerCase());
    if (!protocol) throw new ApiError("PROTOCOL_NOT_FOUND", `no protocol '${id}' is configured`);
    return protocol;
  };

  // The configuration does not change while the process runs: built once.
  const list: ProtocolListJson = {
    protocols: common.config.protocols.map((p) => ({
      id: p.id,
      name: p.name,
      contracts: p.contracts.map((c) => ({
        name: c.name,
        address: getAddress(c.address),
        exclusive: c.exclusive,
      })),
      tvlAddresses: p.tvlAddresses.map((a) => getAddress(a)),
      tokens: common.config.tokens.filter((t) => t.protocol === p.id).map((t) => getAddress(t.address)),
    })),
  };

  app.get(
    "/api/protocols",
    {
      schema: {
        operationId: "listProtocols",
        summary: "The configured protocols with their named contracts, TVL addresses and tokens",
        tags: ["protocols"],
        response: { 200: ProtocolListSchema },
      },
    },
    async () => list,
  );

  app.get(
    "/api/protocol/:protocolId/stats",
    {
      schema: {
        operationId: "getProtocolStats",
        summary: "TVL, 24-hour volume, unique users and transaction count of one protocol",
        tags: ["protocols"],
        params: ProtocolParams,
        response: { 200: ProtocolStatsSchema, 400: ProblemSchema, 404: ProblemSchema },
      },
    },
    async (request) => {
      const protocol = protocolOf(request.params.protocolId);
      const [counts, usd] = await Promise.all([
        readThrough(countsCache, protocol.id, () => getProtocolCounts(db, protocol.id)),
        deps.usdStats.figures(),
      ]);
      return {
        protocol: protocol.id,
        ...toProtocolStatsJson(counts, usd.protocols.get(protocol.id), usd.at),
      };
    },
  );

  app.get(
    "/api/protocol/:protocolId/transactions",
    {
      schema: {
        operationId: "getProtocolTransactions",
        summary: "Stored transactions of one protocol, newest first (block number, then index)",
        tags: ["protocols"],
        params: ProtocolParams,
        querystring: Type.Object(
          {
            limit: Limit,
            offset: Type.Optional(ListOffset),
            cursor: Type.Optional(Cursor),
            actionType: Type.Optional(
              Type.String({ minLength: 1, maxLength: 64, description: "only this action, e.g. swap" }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: ProtocolTransactionsPageSchema, 400: ProblemSchema, 404: ProblemSchema },
      },
    },
    async (request, reply) => {
      const protocol = protocolOf(request.params.protocolId);
      const query = request.query;
      const args = transactionPageArgs(query);
      return cachedReply(reply, pages, request.url, async () => {
        const rows = await getProtocolTransactions(db, protocol.id, {
          ...args,
          actionType: query.actionType,
        });
        return {
          protocol: protocol.id,
          ...(await transactionPage(rows, query.limit, tokens, deps.valueTransactions)),
        };
      });
    },
  );

  app.get(
    "/api/protocol/:protocolId/history",
    {
      schema: {
        operationId: "getProtocolHistory",
        summary: "Transactions, users, USD volume and TVL of one protocol per hour or day",
        tags: ["protocols"],
        params: ProtocolParams,
        querystring: HistoryQuerySchema,
        response: { 200: ProtocolHistorySchema, 400: ProblemSchema, 404: ProblemSchema },
      },
    },
    async (request, reply) => {
      const protocol = protocolOf(request.params.protocolId);
      const range = parseHistoryRange(request.query, new Date());
      return cachedReply(reply, historyBodies, historyBodyKey(request.url, range), async () => {
        const points = await readThrough(historyCache, historyKey(protocol.id, range), () =>
          deps.timeSeries.points({ protocol, span: range.interval, from: range.from, to: range.to }),
        );
        return {
          protocol: protocol.id,
          interval: range.interval,
          from: range.from.toISOString(),
          to: range.to.toISOString(),
          points: points.map((p) => ({ ...p, time: p.time.toISOString(), tvlUsd: p.tvlUsd ?? null })),
        };
      });
    },
  );
}
