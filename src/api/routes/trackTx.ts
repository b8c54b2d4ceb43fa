import Type from "typebox";
import type { Hash } from "viem";
import { tokensByAddress } from "../../config/tokensByAddress.ts";
import type { Common } from "../../internal/common.ts";
import { apiKeyMatches } from "../../tracking/apiKeyMatches.ts";
import { TrackUnavailableError } from "../../tracking/createTracker.ts";
import type { RouteApp, RouteDeps } from "../appDeps.ts";
import { ApiError } from "../errorRegistry.ts";
import { ProblemSchema, TxHashParam } from "../schemas/common.ts";
import { TransactionSchema } from "../schemas/transaction.ts";
import { toTransactionsJson } from "../toTransactionJson.ts";

const TrackTxRequest = Type.Object(
  {
    txHash: TxHashParam,
    protocol: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          "id of a configured protocol: the transaction is attributed to it only if it touches one of its " +
          "contracts or tokens; an id that is not configured is a 400 INVALID_BODY",
        examples: ["demoswap"],
      }),
    ),
  },
  { $id: "TrackTxRequest", additionalProperties: false },
);

const TrackTxIndexed = Type.Object(
  {
    status: Type.Literal("indexed"),
    transaction: TransactionSchema,
  },
  {
    $id: "TrackTxIndexed",
    description: "Stored (now or before): the same Transaction as GET /api/tx/{hash}",
  },
);

const TrackTxPending = Type.Object(
  {
    status: Type.Literal("pending"),
    txHash: Type.String({ description: "lowercase 0x hash" }),
  },
  {
    $id: "TrackTxPending",
    description:
      "Not mined yet, or unknown to the node: watched (persisted, re-checked at least every 5 s) for up to " +
      "10 minutes and indexed when mined",
  },
);

type ValidationFailure = {
  validation?: { instancePath?: string; message?: string; params?: Record<string, unknown> }[];
};

/**
 * `POST /api/track-tx` (SPEC §3.3, §4 row 7): index one transaction now instead of waiting for polling, e.g.
 * right after a site's user sent it, or one sent to a shared contract that polling never scans.
 * 200 with the stored Transaction; 202 while it is not mined (the track watcher takes over); 422
 * `NOT_RELEVANT` when it is mined but touches nothing configured; 400 `INVALID_TX_HASH` for a malformed hash,
 * `INVALID_BODY` for any other bad body (an unknown `protocol` id included); 401 `UNAUTHORIZED` without a
 * matching `X-API-Key` when `api.trackTxApiKeys` is set (checked before the body is read); 503
 * `UPSTREAM_UNAVAILABLE` when the node fails (the hash is watched all the same). Rate limited per client IP
 * with the reads (`api.rateLimitPerMinute`).
 */
export function registerTrackTxRoutes(app: RouteApp, common: Common, deps: RouteDeps): void {
  const tokens = tokensByAddress(common.config);
  const protocolIds = new Set(common.config.protocols.map((p) => p.id));
  const keys = common.config.api.trackTxApiKeys;

  app.post(
    "/api/track-tx",
    {
      schema: {
        operationId: "trackTransaction",
        summary: "Index a transaction by hash now, or watch it until it is mined",
        description: [
          "Fetches the transaction and its receipt from the node and stores it if it touches a configured",
          "contract (exclusive or shared) or a tracked token. A transaction stored before is answered from",
          "the database. Unmined or unknown hashes are watched for 10 minutes.",
          ...(keys.length > 0
            ? ["Requires an `X-API-Key` header matching one of `api.trackTxApiKeys`."]
            : []),
        ].join(" "),
        tags: ["ingest"],
        security: keys.length > 0 ? [{ apiKey: [] }] : [],
        body: TrackTxRequest,
        response: {
          200: TrackTxIndexed,
          202: TrackTxPending,
          400: ProblemSchema,
          ...(keys.length > 0 ? { 401: ProblemSchema } : {}),
          422: ProblemSchema,
          503: ProblemSchema,
        },
      },
      attachValidation: true,
      onRequest: async (request) => {
        if (keys.length === 0 || apiKeyMatches(request.headers["x-api-key"], keys)) return;
        throw new ApiError(
          "UNAUTHORIZED",
          request.headers["x-api-key"] === undefined
            ? "an X-API-Key header is required"
            : "X-API-Key does not match a configured key",
        );
      },
    },
    async (request, reply) => {
      if (request.validationError) throw bodyError(request.validationError as ValidationFailure);
      const body = request.body;
      if (body.protocol !== undefined && !protocolIds.has(body.protocol)) {
        throw new ApiError("INVALID_BODY", `protocol: no configured protocol has the id "${body.protocol}"`);
      }
      if (!deps.tracker) throw new ApiError("UPSTREAM_UNAVAILABLE", "track-tx is not served by this process");
      const hash = body.txHash.toLowerCase() as Hash;
      let outcome: Awaited<ReturnType<typeof deps.tracker.track>>;
      try {
        outcome = await deps.tracker.track(hash, body.protocol);
      } catch (error) {
        if (!(error instanceof TrackUnavailableError)) throw error;
        throw new ApiError(
          "UPSTREAM_UNAVAILABLE",
          error.reorg
            ? `the chain reorganized under the block of ${hash}; it is watched for 10 minutes and indexed once its block is settled`
            : `the node could not be asked about ${hash}; it is watched for 10 minutes and indexed once mined`,
        );
      }
      if (outcome.status === "pending") {
        return reply.code(202).send({ status: "pending", txHash: outcome.hash });
      }
      if (outcome.status === "not_relevant") {
        throw new ApiError(
          "NOT_RELEVANT",
          `transaction ${hash} touches no configured contract or tracked token; it is not stored`,
        );
      }
      const [transaction] = await toTransactionsJson([outcome.details], tokens, deps.valueTransactions);
      return reply.code(200).send({ status: "indexed", transaction: transaction! });
    },
  );
}

/** The problem for a body that fails the schema: a malformed hash has its own code, anything else names the field. */
function bodyError(error: ValidationFailure): ApiError {
  const first = error.validation?.[0];
  const field = first?.instancePath?.split("/").filter(Boolean)[0];
  const { missingProperty, additionalProperty } = first?.params ?? {};
  if (field === "txHash") {
    return new ApiError("INVALID_TX_HASH", "txHash: not a 32-byte hex transaction hash with a 0x prefix");
  }
  if (field === undefined && typeof missingProperty === "string") {
    return new ApiError("INVALID_BODY", `${missingProperty}: is required`);
  }
  if (field === undefined && typeof additionalProperty === "string") {
    return new ApiError("INVALID_BODY", `${additionalProperty.slice(0, 64)}: is not a known field`);
  }
  if (field === undefined) return new ApiError("INVALID_BODY", 'body: must be a JSON object with "txHash"');
  return new ApiError("INVALID_BODY", `${field}: ${first?.message ?? "is invalid"}`);
}
