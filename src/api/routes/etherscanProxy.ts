import { classifyRpcError } from "../../chain/classifyRpcError.ts";
import { type ChainError, isChainError } from "../../chain/errors.ts";
import { createTtlCache } from "../cache/createTtlCache.ts";
import type { EtherscanContext, EtherscanModules } from "../etherscanContext.ts";
import { EtherscanError, type JsonRpcAnswer, rpcError, rpcResult } from "../etherscanEnvelope.ts";
import {
  addressParam,
  type EtherscanParams,
  hexDataParam,
  optionalAddressParam,
  tagParam,
  txHashParam,
} from "../etherscanParams.ts";

/** How long a mined transaction or receipt is served from memory (a reorg deeper than that is not expected). */
const MINED_TTL_MS = 60_000;

/**
 * `proxy`: JSON-RPC calls forwarded to the node through protoscan's chain client (its rate limit, retries,
 * failover and compute-unit accounting), answered as Etherscan does, `{"jsonrpc":"2.0","id":1,"result":…}`.
 * A mined transaction and its receipt cannot change but by a reorg: they are kept a minute; a pending one,
 * or none, is asked again each time. A node error is the JSON-RPC `error` it sent (a revert keeps its `data`).
 */
export function proxyActions(ctx: EtherscanContext): EtherscanModules["proxy"] {
  const mined = createTtlCache<string, unknown>({ ttlMs: MINED_TTL_MS, maxEntries: 10_000 });

  const forward = async (method: string, params: readonly unknown[]): Promise<JsonRpcAnswer> => {
    try {
      return rpcResult(await ctx.deps.chain.request(method, params));
    } catch (error) {
      return rpcErrorOf(method, error);
    }
  };

  /** A transaction or receipt: from memory once mined (a miss is never cached: it may be mined next). */
  const minedOnly = async (method: string, hash: string): Promise<JsonRpcAnswer> => {
    const key = `${method} ${hash}`;
    try {
      const value = await mined.get(key, async () => {
        const result = await ctx.deps.chain.request<{ blockNumber?: string | null } | null>(method, [hash]);
        if (result === null || !result.blockNumber) throw new NotMinedYet(result);
        return result;
      });
      return rpcResult(value);
    } catch (error) {
      if (error instanceof NotMinedYet) return rpcResult(error.answer);
      return rpcErrorOf(method, error);
    }
  };

  const callObject = (params: EtherscanParams) => {
    const call: Record<string, string> = { to: addressParam(params, "to") };
    const from = optionalAddressParam(params, "from");
    if (from !== undefined) call.from = from;
    const data = hexDataParam(params, "data");
    if (data !== "0x") call.data = data;
    for (const name of ["value", "gas", "gasPrice"]) {
      const value = params[name];
      if (value === undefined || value === "") continue;
      if (!/^0x[0-9a-fA-F]{1,64}$/.test(value)) throw new EtherscanError(`Error! Invalid ${name}`);
      call[name] = `0x${BigInt(value).toString(16)}`;
    }
    return call;
  };

  return {
    eth_blockNumber: () => forward("eth_blockNumber", []),
    eth_gasPrice: () => forward("eth_gasPrice", []),
    eth_getBlockByNumber: async (params) => {
      const full = params.boolean ?? "false";
      if (full !== "true" && full !== "false") throw new EtherscanError("Error! Invalid boolean");
      return forward("eth_getBlockByNumber", [tagParam(params), full === "true"]);
    },
    eth_getTransactionByHash: async (params) => minedOnly("eth_getTransactionByHash", txHashParam(params)),
    eth_getTransactionReceipt: async (params) => minedOnly("eth_getTransactionReceipt", txHashParam(params)),
    eth_getCode: async (params) => forward("eth_getCode", [addressParam(params), tagParam(params)]),
    eth_getTransactionCount: async (params) =>
      forward("eth_getTransactionCount", [addressParam(params), tagParam(params)]),
    eth_call: async (params) => forward("eth_call", [callObject(params), tagParam(params)]),
  };
}

class NotMinedYet extends Error {
  readonly answer: unknown;
  constructor(answer: unknown) {
    super("not mined yet");
    this.answer = answer;
  }
}

/** The node's JSON-RPC error as it sent it; a node out of reach is `-32000` with the client's message. */
function rpcErrorOf(method: string, error: unknown): JsonRpcAnswer {
  const chainError = isChainError(error) ? error : classifyRpcError(error, { method });
  return rpcError(chainError.code ?? -32000, nodeErrorMessage(method, chainError), chainError.data);
}

/** The node's own text of a failed `method` call, without the chain client's `<method> failed: ` prefix. */
export function nodeErrorMessage(method: string, error: ChainError): string {
  return error.shortMessage.replace(new RegExp(`^${method} failed(?: \\(transient\\))?: `), "");
}
