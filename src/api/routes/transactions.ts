import Type from "typebox";
import { tokensByAddress } from "../../config/tokensByAddress.ts";
import type { Common } from "../../internal/common.ts";
import { createBatchLoader } from "../../internal/createBatchLoader.ts";
import { getRecentTransactions } from "../../store/transactionReads.ts";
import { getTransactionSummaries } from "../../store/transactionSummaries.ts";
import type { RouteApp, RouteDeps } from "../appDeps.ts";
import { cachedReply } from "../cache/cachedReply.ts";
import { createEventCache } from "../cache/createEventCache.ts";
import { PRICE_HISTORY_CHANGES } from "../cache/priceHistoryChanges.ts";
import { ApiError } from "../errorRegistry.ts";
import { ProblemSchema, TxHashParam } from "../schemas/common.ts";
import { TransactionSchema } from "../schemas/transaction.ts";
import { toTransactionsJson } from "../toTransactionJson.ts";

/**
 * Bytes of transaction bodies kept by `GET /api/tx/:hash`, least recently used dropped first: about 8,000
 * transactions of 2 KB. A body is kept from a hash's second read (`TX_CACHE_DOORKEEPER`), not rebuilt per request.
 */
export const TX_CACHE_BYTES = 16 * 2 ** 20;

/**
 * A transaction's body is kept from its second read among the last this many distinct hashes read (about
 * 1 MB of hashes): one walk over every transaction (a crawler, an archive job) then evicts nothing the
 * explorer's readers come back to, and a hash read once costs no kept bytes
 * (`ResponseCacheOptions.doorkeeper`).
 */
export const TX_CACHE_DOORKEEPER = 10_000;

/** Bytes of recent-transaction lists kept (a page of 100 is about 200 KB; 25, the default, about 50 KB). */
export const RECENT_CACHE_BYTES = 8 * 2 ** 20;

/**
 * Hashes read and valued together at most: the cache misses of concurrent `GET /api/tx/:hash` requests share
 * one summary query and one `pricesAt` (`createBatchLoader`).
 */
export const TX_BATCH = 100;

/**
 * How a Transaction body (and a list of them) is written for the caches: `JSON.stringify`, not the route's
 * compiled schema serializer. `toTransactionJson` builds exactly the schema's object, its fields in the
 * schema's order, so both write the same bytes (the route tests compare the cached body with Fastify's, and
 * `toTransactionJson.test.ts` every kind of field), but for a decoded argument whose name holds a line
 * terminator: Fastify's serializer drops it, this keeps it. The native one took 7.5 µs per transaction
 * instead of 26, and allocates only its result, on the path every cold `GET /api/tx/:hash` takes
 * (docs/performance.md, "The 2026-11-28 second session"). The WebSocket's transaction messages are written
 * the same way.
 */
const stringify = (value: unknown): string => JSON.stringify(value);

/**
 * Batches of cache misses read at once: on PGlite's one connection one (the misses that arrive meanwhile make
 * the next batch, see `createBatchLoader`); on PostgreSQL a few, each on a connection of the pool.
 */
const TX_BATCHES_IN_FLIGHT = { pglite: 1, postgres: 4 } as const;

/**
 * `GET /api/tx/:hash` and `GET /api/transactions/recent` (SPEC §4 rows 5 and 6). With `deps.events`, their
 * serialized bodies are cached until an event changes them: a transaction's until a reorg removes one (a
 * stored transaction never changes otherwise; a 404 is never cached), the recent lists until any stored or
 * removed transaction; both also until price history changes (their USD values at block time). Both caches
 * are bounded in bytes (docs/performance.md, "Caches and read paths").
 */
export function registerTransactionRoutes(app: RouteApp, common: Common, deps: RouteDeps) {
  const tokens = tokensByAddress(common.config);
  const db = deps.database.db;
  // Bodies hold USD values at block time: a change of price history (an api backfill) empties them too.
  const alsoChangedBy = { notices: deps.changes, tables: PRICE_HISTORY_CHANGES };
  const byHash = createEventCache(app, deps.events, {
    maxEntries: 100_000,
    maxBytes: TX_CACHE_BYTES,
    doorkeeper: TX_CACHE_DOORKEEPER,
    emptiedBy: "removed",
    alsoChangedBy,
  });
  const recent = createEventCache(app, deps.events, {
    maxEntries: 100,
    maxBytes: RECENT_CACHE_BYTES,
    emptiedBy: "any",
    alsoChangedBy,
  });
  const transactionJson = createBatchLoader(
    async (hashes: readonly string[]) => {
      const found = await getTransactionSummaries(db, hashes);
      const jsons = await toTransactionsJson(found, tokens, deps.valueTransactions);
      return new Map(found.map((summary, i) => [summary.tx.hash, jsons[i]!]));
    },
    { maxBatch: TX_BATCH, maxInFlight: TX_BATCHES_IN_FLIGHT[deps.database.kind] },
  );

  app.get(
    "/api/tx/:hash",
    {
      schema: {
        operationId: "getTransaction",
        summary: "One stored transaction with its decoded call, events and token transfers",
        tags: ["transactions"],
        params: Type.Object({ hash: TxHashParam }),
        response: { 200: TransactionSchema, 400: ProblemSchema, 404: ProblemSchema },
      },
    },
    async (request, reply) => {
      const hash = request.params.hash.toLowerCase();
      return cachedReply(
        reply,
        byHash,
        hash,
        async () => {
          const json = await transactionJson(hash);
          if (!json) throw new ApiError("TX_NOT_FOUND", `transaction ${hash} is not indexed`);
          return json;
        },
        { serialize: stringify },
      );
    },
  );

  app.get(
    "/api/transactions/recent",
    {
      schema: {
        operationId: "getRecentTransactions",
        summary: "Newest stored transactions (block number, then index)",
        tags: ["transactions"],
        querystring: Type.Object(
          {
            limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
            protocol: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            actionType: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ transactions: Type.Array(TransactionSchema) }), 400: ProblemSchema },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const key = JSON.stringify([query.limit, query.protocol ?? null, query.actionType ?? null]);
      return cachedReply(
        reply,
        recent,
        key,
        async () => {
          const rows = await getRecentTransactions(db, query);
          return { transactions: await toTransactionsJson(rows, tokens, deps.valueTransactions) };
        },
        { serialize: stringify },
      );
    },
  );
}
