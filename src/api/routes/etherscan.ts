import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import Type from "typebox";
import type { Common } from "../../internal/common.ts";
import { RetryableError } from "../../internal/errors.ts";
import { apiKeyMatches } from "../../tracking/apiKeyMatches.ts";
import type { RouteDeps } from "../appDeps.ts";
import { cachedReply } from "../cache/cachedReply.ts";
import { createEventCache } from "../cache/createEventCache.ts";
import { ApiError, ERROR_REGISTRY } from "../errorRegistry.ts";
import { type ActionHandler, createEtherscanContext, type EtherscanModules } from "../etherscanContext.ts";
import {
  ETHERSCAN_ERRORS,
  ETHERSCAN_PATHS,
  type EtherscanAnswer,
  EtherscanError,
  notOk,
} from "../etherscanEnvelope.ts";
import { type EtherscanParams, mergeParams } from "../etherscanParams.ts";
import { accountActions } from "./etherscanAccount.ts";
import { blockActions, logsActions } from "./etherscanLogs.ts";
import { proxyActions } from "./etherscanProxy.ts";
import { contractActions, statsActions, tokenActions } from "./etherscanTokens.ts";

const ParamsSchema = Type.Object(
  {
    module: Type.Optional(
      Type.String({
        enum: ["account", "contract", "token", "stats", "logs", "block", "proxy"],
        description: "the module",
        examples: ["account"],
      }),
    ),
    action: Type.Optional(
      Type.String({
        maxLength: 64,
        description: "the module's action (docs/etherscan.md)",
        examples: ["txlist"],
      }),
    ),
    apikey: Type.Optional(
      Type.String({ maxLength: 256, description: "one of `api.etherscanApiKeys` when any is configured" }),
    ),
  },
  { additionalProperties: true },
);
const V2ParamsSchema = Type.Object(
  {
    chainid: Type.Optional(
      Type.String({
        pattern: "^[0-9]{1,20}$",
        description: "must equal the configured `chain.id` (also `chainId`)",
      }),
    ),
    ...ParamsSchema.properties,
  },
  { additionalProperties: true },
);

const AnswerSchema = Type.Object(
  {
    status: Type.Optional(Type.String({ description: "`1` OK, `0` empty list or error" })),
    message: Type.Optional(
      Type.String({ description: "`OK`, `NOTOK`, `No transactions found`, `No records found`" }),
    ),
    result: Type.Optional(Type.Unknown({ description: "the answer, or the error text" })),
    jsonrpc: Type.Optional(Type.String({ description: "`proxy` module: `2.0`" })),
    id: Type.Optional(Type.Integer({ description: "`proxy` module: 1" })),
    error: Type.Optional(Type.Unknown({ description: "`proxy` module: the node's JSON-RPC error" })),
  },
  {
    additionalProperties: false,
    description:
      "Etherscan's envelope `{status, message, result}`, or a JSON-RPC answer for `proxy`; always HTTP 200",
  },
);

/**
 * Etherscan's API over what protoscan stores (SPEC §11, docs/etherscan.md): `GET`/`POST /api` and `/v2/api`
 * with `module` and `action`, parameters in the query string, a form-encoded or a JSON body. Every answer is
 * HTTP 200 in Etherscan's envelope, errors and the rate limit of SPEC §8 included (`Max rate limit reached`),
 * so that the clients that speak it read them as they read Etherscan's. Registered in a scope of its own: the
 * form parser and the error handler here do not reach the problem+json routes of `/api/*`.
 */
export function registerEtherscanRoutes(app: FastifyInstance, common: Common, deps: RouteDeps): void {
  const ctx = createEtherscanContext(common, deps);
  const modules: EtherscanModules = {
    account: accountActions(ctx),
    contract: contractActions(ctx),
    token: tokenActions(ctx),
    stats: statsActions(ctx),
    logs: logsActions(ctx),
    block: blockActions(ctx),
    proxy: proxyActions(ctx),
  };
  const apiKeys = common.config.api.etherscanApiKeys;
  const chainId = String(common.config.chain.id);
  const logger = common.logger.child({ module: "etherscan" });

  // Answers read from the store are kept until the next stored or removed transaction (and, for balances,
  // the next committed balance change), keyed by the parameters and the indexed head (`confirmations`).
  const stored = createEventCache(app, deps.events, { maxEntries: 1_000, emptiedBy: "any" });
  const balances = createEventCache(app, deps.events, {
    maxEntries: 1_000,
    emptiedBy: "any",
    alsoChangedBy: { notices: deps.changes, tables: ["token_balances"] },
  });
  const caches = { stored, balances };
  const cacheOf = (module: string, action: string) => {
    const which = CACHED[`${module} ${action}`];
    return which === undefined ? null : caches[which];
  };

  /** The handler of a request that passes the chain, key, module and action checks, or the answer refusing it. */
  const route = (params: EtherscanParams, v2: boolean): ActionHandler | EtherscanAnswer => {
    if (v2 && (params.chainid ?? params.chainId) !== chainId) return notOk(ETHERSCAN_ERRORS.chainId);
    // Compared in constant time, as the track-tx keys.
    if (apiKeys.length > 0 && !apiKeyMatches(params.apikey, apiKeys)) return notOk(ETHERSCAN_ERRORS.apiKey);
    const actions = Object.hasOwn(modules, params.module ?? "") ? modules[params.module!] : undefined;
    if (actions === undefined) return notOk(ETHERSCAN_ERRORS.module);
    const handler = Object.hasOwn(actions, params.action ?? "") ? actions[params.action!] : undefined;
    return handler ?? notOk(ETHERSCAN_ERRORS.action);
  };

  const answer = async (request: FastifyRequest, reply: FastifyReply, v2: boolean) => {
    const params = mergeParams(request.query, request.body);
    const handler = route(params, v2);
    if (typeof handler !== "function") return send(reply, handler);
    const cache = cacheOf(params.module!, params.action!);
    if (cache === null) return send(reply, await handler(params));
    // Kept as serialized bytes, as the other cached routes (cache/cachedReply.ts).
    const since = cache.version();
    const key = `${await ctx.indexedHead()} ${cacheKey(params)}`;
    reply.code(200);
    return cachedReply(reply, cache, key, () => handler(params), { since });
  };

  app.register(async (scope) => {
    // The schemas document the parameters; the actions read and check them, answering Etherscan's texts.
    scope.setValidatorCompiler(() => () => true);
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string" },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    scope.setErrorHandler((error: unknown, request, reply) => {
      if (error instanceof ApiError && error.code === "RATE_LIMITED")
        return send(reply, notOk(ETHERSCAN_ERRORS.rateLimit));
      if (error instanceof EtherscanError) return send(reply, notOk(error.result));
      const status =
        error instanceof ApiError
          ? ERROR_REGISTRY[error.code].status
          : (error as { statusCode?: number }).statusCode;
      // A body over 1 MiB stays an HTTP error (problem+json, as on every route): it never reached Etherscan's API.
      if (status === 413) throw error;
      if (status !== undefined && status < 500) return send(reply, notOk("Error! Invalid request"));
      if (status === 503 || error instanceof RetryableError) {
        logger.warn({ err: error, url: request.url }, "etherscan request: the node did not answer");
        return send(reply, notOk("Error! The node did not answer, please retry later"));
      }
      logger.error({ err: error, url: request.url }, "etherscan request failed");
      return send(reply, notOk("Error! Something went wrong, please retry later"));
    });

    for (const url of ETHERSCAN_PATHS) {
      const v2 = url === "/v2/api";
      const querystring = v2 ? V2ParamsSchema : ParamsSchema;
      const handle = (request: FastifyRequest, reply: FastifyReply) => answer(request, reply, v2);
      const name = v2 ? "etherscanV2" : "etherscan";
      const description = v2
        ? "Etherscan V2: `chainid` must equal `chain.id`. Modules and actions as `/api` (docs/etherscan.md)."
        : "Modules account, contract, token, stats, logs, block and proxy over what protoscan indexes (docs/etherscan.md).";
      scope.get(url, {
        schema: {
          operationId: name,
          summary: `Etherscan-compatible API${v2 ? " (V2)" : ""}`,
          description,
          tags: ["etherscan"],
          querystring,
          response: { 200: AnswerSchema },
        },
        handler: handle,
      });
      scope.post(url, {
        schema: {
          operationId: `${name}Post`,
          summary: `Etherscan-compatible API${v2 ? " (V2)" : ""}, parameters in a form or JSON body`,
          description,
          tags: ["etherscan"],
          querystring,
          body: querystring,
          response: { 200: AnswerSchema },
        },
        handler: handle,
      });
    }
  });
}

/** The actions answered from the store, by the cache that keeps their answers. */
const CACHED: Readonly<Record<string, "stored" | "balances">> = {
  "account txlist": "stored",
  "account tokentx": "stored",
  "logs getLogs": "stored",
  "account tokenbalance": "balances",
  "token tokenholderlist": "balances",
};

/** The parameters that make an answer, in a fixed order (`apikey` and the chain id do not). */
function cacheKey(params: EtherscanParams): string {
  return JSON.stringify(
    Object.entries(params)
      .filter(([key]) => key !== "apikey" && key !== "chainid" && key !== "chainId")
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

function send(reply: FastifyReply, answer: EtherscanAnswer): FastifyReply {
  return reply.code(200).type("application/json; charset=utf-8").send(answer);
}
