import Type from "typebox";
import type { Address, TokenConfig } from "../../config/schema.ts";
import { tokensByAddress } from "../../config/tokensByAddress.ts";
import type { Common } from "../../internal/common.ts";
import { getHoldersPage, getTokenCounts, getTokenTransfers } from "../../store/tokenReads.ts";
import type { RouteApp, RouteDeps } from "../appDeps.ts";
import { cachedReply } from "../cache/cachedReply.ts";
import { createEventCache } from "../cache/createEventCache.ts";
import { createTotalSupplyReader } from "../createTotalSupplyReader.ts";
import { decodeCursor, encodeCursor } from "../cursor.ts";
import { ApiError } from "../errorRegistry.ts";
import { AddressParam, Cursor, Limit, Offset, ProblemSchema } from "../schemas/common.ts";
import {
  HoldersPageSchema,
  TokenDetailSchema,
  TokenListSchema,
  TransferEventsPageSchema,
} from "../schemas/tokenResponses.ts";
import { toTokenJson, toTransferEventJson } from "../toTokenJson.ts";
import { checksum } from "../toTransactionJson.ts";

const TokenParams = Type.Object({ address: AddressParam });
const BlockNumber = (description: string) => Type.Integer({ minimum: 0, maximum: 1e15, description });

/**
 * `GET /api/tokens`, `/api/tokens/:address`, `/api/tokens/:address/holders` and `/api/tokens/:address/events`
 * (SPEC §4 rows 1-4). Tokens come from the config; counters, holders and events from the store; prices from
 * the price engine (its cache, else the `prices` table, else a lookup); `totalSupply` from the node through
 * a 15-second cache. With `deps.events`, event pages are cached until the next stored or removed transaction,
 * and holders pages until that or the next committed balance change (`deps.changes`: call-mode balances are
 * refreshed without an ingest event), per total supply (which `share` depends on).
 */
export function registerTokenRoutes(app: RouteApp, common: Common, deps: RouteDeps) {
  const db = deps.database.db;
  const tracked = tokensByAddress(common.config);
  const list = { tokens: common.config.tokens.map(toTokenJson) };
  const eventPages = createEventCache(app, deps.events, { maxEntries: 1_000, emptiedBy: "any" });
  const holderPages = createEventCache(app, deps.events, {
    maxEntries: 1_000,
    emptiedBy: "any",
    alsoChangedBy: { notices: deps.changes, tables: ["token_balances"] },
  });
  const supply = createTotalSupplyReader({
    chain: deps.chain,
    logger: common.logger.child({ module: "api" }),
  });

  /** The tracked token at `address` (any case), else 404 TOKEN_NOT_TRACKED. */
  const trackedToken = (address: string): TokenConfig => {
    const token = tracked.get(address.toLowerCase());
    if (!token) throw new ApiError("TOKEN_NOT_TRACKED", `${checksum(address)} is not a tracked token`);
    return token;
  };

  app.get(
    "/api/tokens",
    {
      schema: {
        operationId: "listTokens",
        summary: "Every tracked token of the configuration, in config order",
        tags: ["tokens"],
        response: { 200: TokenListSchema },
      },
    },
    async () => list,
  );

  app.get(
    "/api/tokens/:address",
    {
      schema: {
        operationId: "getToken",
        summary: "One tracked token with its price, total supply, holder and transfer counts",
        tags: ["tokens"],
        params: TokenParams,
        response: { 200: TokenDetailSchema, 400: ProblemSchema, 404: ProblemSchema, 503: ProblemSchema },
      },
    },
    async (request) => {
      const token = trackedToken(request.params.address);
      const [counts, price, totalSupply] = await Promise.all([
        getTokenCounts(db, token.address),
        deps.prices.priceOf(token.address),
        supply.get(token.address),
      ]);
      return {
        ...toTokenJson(token),
        priceUsd: price?.usd ?? null,
        priceSource: price?.source ?? null,
        priceUpdatedAt: price?.at.toISOString() ?? null,
        totalSupply: totalSupply.toString(),
        holdersCount: counts.holdersCount,
        transfersCount: counts.transfersCount,
      };
    },
  );

  app.get(
    "/api/tokens/:address/holders",
    {
      schema: {
        operationId: "getTokenHolders",
        summary:
          "Holders of a tracked token by balance, largest first (ties by address), zero balances excluded",
        tags: ["tokens"],
        params: TokenParams,
        querystring: Type.Object({ limit: Limit, offset: Offset }, { additionalProperties: false }),
        response: { 200: HoldersPageSchema, 400: ProblemSchema, 404: ProblemSchema, 503: ProblemSchema },
      },
    },
    async (request, reply) => {
      const token = trackedToken(request.params.address);
      const { limit, offset } = request.query;
      const totalSupply = await supply.get(token.address);
      return cachedReply(reply, holderPages, `${request.url} ${totalSupply}`, async () => {
        const { total, holders } = await getHoldersPage(db, token.address, { limit, offset });
        // A double-precision ratio: exact enough for a share, and never a float for the amounts themselves.
        const supplyNumber = Number(totalSupply);
        return {
          token: checksum(token.address),
          holders: holders.map((row, i) => ({
            rank: offset + i + 1,
            address: checksum(row.holder),
            balance: row.balance.toString(),
            share: totalSupply === 0n ? 0 : Number(row.balance) / supplyNumber,
          })),
          total,
          limit,
          offset,
        };
      });
    },
  );

  app.get(
    "/api/tokens/:address/events",
    {
      schema: {
        operationId: "getTokenEvents",
        summary: "Stored Transfer events of a tracked token, newest first (block number, then log index)",
        tags: ["tokens"],
        params: TokenParams,
        querystring: Type.Object(
          {
            limit: Limit,
            offset: Type.Optional(
              Type.Integer({
                minimum: 0,
                maximum: 10_000,
                description: "rows to skip (default 0); not with `cursor`",
              }),
            ),
            cursor: Type.Optional(Cursor),
            address: Type.Optional(
              Type.String({
                pattern: "^0x[0-9a-fA-F]{40}$",
                description: "only transfers where this address (any case) is the sender or the receiver",
              }),
            ),
            fromBlock: Type.Optional(BlockNumber("first block, inclusive")),
            toBlock: Type.Optional(BlockNumber("last block, inclusive")),
          },
          { additionalProperties: false },
        ),
        response: { 200: TransferEventsPageSchema, 400: ProblemSchema, 404: ProblemSchema },
      },
    },
    async (request, reply) => {
      const token = trackedToken(request.params.address);
      const query = request.query;
      if (query.cursor !== undefined && query.offset !== undefined) {
        throw new ApiError(
          "INVALID_PARAMETER",
          "cursor: cannot be combined with offset; use one or the other",
        );
      }
      if (query.fromBlock !== undefined && query.toBlock !== undefined && query.fromBlock > query.toBlock) {
        throw new ApiError("INVALID_PARAMETER", "fromBlock: must not be greater than toBlock");
      }
      const position = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      return cachedReply(reply, eventPages, request.url, async () => {
        // One row more than asked tells whether a next page exists: nextCursor is null on the last page.
        const rows = await getTokenTransfers(db, token.address, {
          limit: query.limit + 1,
          offset: query.offset ?? 0,
          before: position && { blockNumber: position.blockNumber, logIndex: position.index },
          party: query.address?.toLowerCase() as Address | undefined,
          fromBlock: query.fromBlock,
          toBlock: query.toBlock,
        });
        const page = rows.slice(0, query.limit);
        const last = page.at(-1);
        return {
          token: checksum(token.address),
          events: page.map((row) => toTransferEventJson(row, token)),
          nextCursor:
            rows.length > query.limit && last
              ? encodeCursor({ blockNumber: last.blockNumber, index: last.logIndex })
              : null,
        };
      });
    },
  );
}
