import Type from "typebox";
import type { Address } from "../../config/schema.ts";
import { tokensByAddress } from "../../config/tokensByAddress.ts";
import type { Common } from "../../internal/common.ts";
import {
  getAddressTransactionCount,
  getAddressTransactions,
  getHeldTokens,
} from "../../store/addressReads.ts";
import type { RouteApp, RouteDeps } from "../appDeps.ts";
import { cachedReply } from "../cache/cachedReply.ts";
import { createEventCache } from "../cache/createEventCache.ts";
import { PRICE_HISTORY_CHANGES } from "../cache/priceHistoryChanges.ts";
import { ApiError } from "../errorRegistry.ts";
import { AddressTransactionsPageSchema, AddressViewSchema, ListOffset } from "../schemas/address.ts";
import { AddressParam, Cursor, Limit, ProblemSchema } from "../schemas/common.ts";
import { checksum } from "../toTransactionJson.ts";
import { transactionPage, transactionPageArgs } from "../transactionPage.ts";

const AddressParams = Type.Object({ address: AddressParam });

/**
 * `GET /api/address/:address` and `/api/address/:address/transactions` (SPEC §4 rows 13 and 14). Any valid
 * address answers: the native balance and code come from the node (short caches), token balances from the
 * balance cache, transactions from the `address_transactions` index. With `deps.events`, transaction pages are
 * cached until the next stored or removed transaction, and views (per address and node figures) until that
 * or the next committed balance change (`deps.changes`: call-mode balances are refreshed without an ingest
 * event).
 */
export function registerAddressRoutes(app: RouteApp, common: Common, deps: RouteDeps) {
  const db = deps.database.db;
  const tokens = tokensByAddress(common.config);
  const tokenOrder = new Map(common.config.tokens.map((t, i) => [t.address as string, i]));
  const protocols = new Set(common.config.protocols.map((p) => p.id));
  // Transaction pages hold USD values at block time: price history changes empty them too.
  const pages = createEventCache(app, deps.events, {
    maxEntries: 1_000,
    emptiedBy: "any",
    alsoChangedBy: { notices: deps.changes, tables: PRICE_HISTORY_CHANGES },
  });
  // Views by address and the node's figures (which key them, as they change on their own clock).
  const views = createEventCache(app, deps.events, {
    maxEntries: 10_000,
    emptiedBy: "any",
    alsoChangedBy: { notices: deps.changes, tables: ["token_balances"] },
  });
  const { accounts } = deps;

  app.get(
    "/api/address/:address",
    {
      schema: {
        operationId: "getAddress",
        summary: "Native balance, contract flag and tracked-token balances of any address",
        tags: ["addresses"],
        params: AddressParams,
        response: { 200: AddressViewSchema, 400: ProblemSchema, 503: ProblemSchema },
      },
    },
    async (request, reply) => {
      const address = request.params.address.toLowerCase() as Address;
      const [balance, isContract] = await Promise.all([
        accounts.balance(address),
        accounts.isContract(address),
      ]);
      return cachedReply(reply, views, `${address} ${balance} ${isContract}`, async () => {
        const [held, transactionCount] = await Promise.all([
          getHeldTokens(db, address),
          getAddressTransactionCount(db, address),
        ]);
        const tokenBalances = held
          .filter((h) => tokens.has(h.tokenAddress))
          .sort((a, b) => tokenOrder.get(a.tokenAddress)! - tokenOrder.get(b.tokenAddress)!)
          .map((h) => {
            const token = tokens.get(h.tokenAddress)!;
            return {
              contractAddress: checksum(token.address),
              tokenBalance: h.balance.toString(),
              symbol: token.symbol,
              name: token.name,
              decimals: token.decimals,
              logo: token.logo,
            };
          });
        return {
          address: checksum(address),
          balance: balance.toString(),
          isContract,
          tokenBalances,
          transactionCount,
        };
      });
    },
  );

  app.get(
    "/api/address/:address/transactions",
    {
      schema: {
        operationId: "getAddressTransactions",
        summary:
          "Stored transactions where the address is sender, recipient or party of a token transfer, newest first",
        tags: ["addresses"],
        params: AddressParams,
        querystring: Type.Object(
          {
            limit: Limit,
            offset: Type.Optional(ListOffset),
            cursor: Type.Optional(Cursor),
            protocol: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 64,
                description: "only transactions of this protocol id",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: AddressTransactionsPageSchema, 400: ProblemSchema, 404: ProblemSchema },
      },
    },
    async (request, reply) => {
      const address = request.params.address.toLowerCase();
      const query = request.query;
      const protocol = query.protocol?.toLowerCase();
      if (protocol !== undefined && !protocols.has(protocol)) {
        throw new ApiError("PROTOCOL_NOT_FOUND", `no protocol '${query.protocol}' is configured`);
      }
      const args = transactionPageArgs(query);
      return cachedReply(reply, pages, request.url, async () => {
        const rows = await getAddressTransactions(db, address, { ...args, protocol });
        return {
          address: checksum(address),
          ...(await transactionPage(rows, query.limit, tokens, deps.valueTransactions)),
        };
      });
    },
  );
}
