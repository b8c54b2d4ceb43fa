import Type from "typebox";
import type { Address } from "../../config/schema.ts";
import { tokensByAddress } from "../../config/tokensByAddress.ts";
import type { Common } from "../../internal/common.ts";
import { getAddressTransactionCount } from "../../store/addressReads.ts";
import {
  type BlockHit,
  findBlockByHash,
  findBlockByNumber,
  findTransactionHit,
} from "../../store/searchReads.ts";
import type { RouteApp, RouteDeps } from "../appDeps.ts";
import { parseSearchQuery } from "../parseSearchQuery.ts";
import { ProblemSchema } from "../schemas/common.ts";
import { MAX_SEARCH_RESULTS, SearchResponseSchema, type SearchResultJson } from "../schemas/search.ts";
import { searchNames, tokenResult } from "../searchNames.ts";
import { checksum } from "../toTransactionJson.ts";

/**
 * `GET /api/search?q=` (SPEC §4 row 12). The term's shape decides what is looked up: a 32-byte hash -> the
 * stored transaction (else a stored block with that hash); a 20-byte address -> the tracked token, else the
 * address, plus the protocol owning it when it is a configured contract; an integer -> the block's stored
 * transactions; and every term -> tokens and protocols by name. Exact matches come first, at most 20.
 */
export function registerSearchRoutes(app: RouteApp, common: Common, deps: RouteDeps) {
  const db = deps.database.db;
  const { config } = common;
  const tokens = tokensByAddress(config);
  const contractOwners = new Map(
    config.protocols.flatMap((p) => p.contracts.map((c) => [c.address as string, p] as const)),
  );
  const { accounts } = deps;

  const blockResult = (block: BlockHit): SearchResultJson => ({
    type: "block",
    blockNumber: block.number,
    blockHash: block.hash,
    blockTimestamp: block.timestamp?.toISOString() ?? null,
    transactions: block.transactions,
  });

  /** Results for the shape of the term, before the name matches. */
  const exact = async (q: ReturnType<typeof parseSearchQuery>): Promise<SearchResultJson[]> => {
    switch (q.kind) {
      case "hash": {
        const tx = await findTransactionHit(db, q.hash);
        if (tx) {
          return [
            {
              type: "transaction",
              txHash: tx.hash,
              blockNumber: tx.blockNumber,
              blockTimestamp: tx.blockTimestamp.toISOString(),
              protocol: tx.protocol,
              actionType: tx.actionType,
            },
          ];
        }
        const block = await findBlockByHash(db, q.hash);
        return block ? [blockResult(block)] : [];
      }
      case "address": {
        const results: SearchResultJson[] = [];
        const token = tokens.get(q.address);
        if (token) results.push(tokenResult(token));
        else {
          const [isContract, transactionCount] = await Promise.all([
            // Best effort: a node outage leaves the flag out rather than failing the search.
            accounts.isContract(q.address as Address).catch(() => undefined),
            getAddressTransactionCount(db, q.address),
          ]);
          results.push({
            type: "address",
            address: checksum(q.address),
            ...(isContract === undefined ? {} : { isContract }),
            transactionCount,
          });
        }
        const owner = contractOwners.get(q.address);
        if (owner) results.push({ type: "protocol", id: owner.id, name: owner.name });
        return results;
      }
      case "block": {
        const block = await findBlockByNumber(db, q.blockNumber);
        return block ? [blockResult(block)] : [];
      }
      case "text":
        return [];
    }
  };

  app.get(
    "/api/search",
    {
      schema: {
        operationId: "search",
        summary: "Find a transaction, block, address, token or protocol by hash, address, number or name",
        tags: ["search"],
        querystring: Type.Object(
          {
            q: Type.String({
              maxLength: 200,
              description:
                "a transaction or block hash, an address, a block number, or the start of a token symbol or name or a protocol id or name (case-insensitive)",
              examples: ["DEMO"],
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: SearchResponseSchema, 400: ProblemSchema },
      },
    },
    async (request) => {
      const q = parseSearchQuery(request.query.q);
      const results = [...(await exact(q)), ...searchNames(config, q.text)];
      // A protocol found by its contract address and again by name is listed once.
      const seen = new Set<string>();
      const unique = results.filter((r) => {
        const key =
          r.type === "protocol" ? `protocol:${r.id}` : r.type === "token" ? `token:${r.address}` : "";
        if (key === "") return true;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      return { query: q.text, results: unique.slice(0, MAX_SEARCH_RESULTS) };
    },
  );
}
