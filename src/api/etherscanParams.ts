import type { Address } from "../config/schema.ts";
import { ETHERSCAN_ERRORS, EtherscanError } from "./etherscanEnvelope.ts";

/** The parameters of one Etherscan request: query string and body merged, each a single string. */
export type EtherscanParams = Readonly<Record<string, string>>;

/** Etherscan's result window: `page` x `offset` may not pass it. */
export const RESULT_WINDOW = 10_000;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const INTEGER = /^[0-9]{1,15}$/;
const TOPIC = /^0x[0-9a-fA-F]{64}$/;

/**
 * Merge the query string and a parsed body (form or JSON) into one parameter set; the body wins, as it is
 * what a POST means. Only string, number and boolean values are kept (a repeated query parameter takes its
 * last value); anything else is left out, so a handler only ever sees strings.
 */
export function mergeParams(...sources: unknown[]): EtherscanParams {
  const params: Record<string, string> = {};
  for (const source of sources) {
    if (source === null || typeof source !== "object" || Array.isArray(source)) continue;
    for (const [key, raw] of Object.entries(source as Record<string, unknown>)) {
      const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
      if (typeof value === "string") params[key] = value;
      else if (typeof value === "number" || typeof value === "boolean") params[key] = String(value);
    }
  }
  return params;
}

/** A required address parameter, lowercase; `Error! Invalid address format` otherwise. */
export function addressParam(params: EtherscanParams, name = "address"): Address {
  const value = params[name];
  if (value === undefined || !ADDRESS.test(value)) throw new EtherscanError(ETHERSCAN_ERRORS.address);
  return value.toLowerCase() as Address;
}

/** An optional address parameter (absent or empty: undefined). */
export function optionalAddressParam(params: EtherscanParams, name: string): Address | undefined {
  return params[name] === undefined || params[name] === "" ? undefined : addressParam(params, name);
}

/** `txhash`, lowercase; `Error! Invalid txhash format` otherwise. */
export function txHashParam(params: EtherscanParams): `0x${string}` {
  const value = params.txhash;
  if (value === undefined || !HASH.test(value)) throw new EtherscanError(ETHERSCAN_ERRORS.txhash);
  return value.toLowerCase() as `0x${string}`;
}

/** A non-negative integer parameter, `fallback` when absent or empty. */
export function integerParam(params: EtherscanParams, name: string, fallback: number): number {
  const value = params[name];
  if (value === undefined || value === "") return fallback;
  if (!INTEGER.test(value)) throw new EtherscanError(`Error! Invalid ${name}`);
  return Number(value);
}

/** A block number parameter: decimal (or `0x` hex for `getLogs`), `latest` is the highest. */
export function blockParam(params: EtherscanParams, name: string, fallback: number): number {
  const value = params[name];
  if (value === undefined || value === "" || value === "latest") return fallback;
  if (/^0x[0-9a-fA-F]{1,13}$/.test(value)) return Number.parseInt(value.slice(2), 16);
  return integerParam(params, name, fallback);
}

export type Paging = {
  page: number;
  offset: number;
  sort: "asc" | "desc";
  startBlock: number;
  endBlock: number;
};

/**
 * `page` (from 1), `offset` (page size, default and maximum `maxOffset`), `sort` (`asc`, the default, or
 * `desc`) and the block bounds (`startblock`/`endblock`, or `fromBlock`/`toBlock` for logs), as Etherscan reads
 * them; `page` x `offset` above 10,000 is Etherscan's result-window error.
 */
export function pagingParams(
  params: EtherscanParams,
  options: { maxOffset: number; from?: string; to?: string },
): Paging {
  // 0 is read as absent, as Etherscan's clients send `page=1&offset=0` for "all it gives".
  const page = integerParam(params, "page", 1) || 1;
  const offset = integerParam(params, "offset", options.maxOffset) || options.maxOffset;
  if (page * offset > RESULT_WINDOW) throw new EtherscanError(ETHERSCAN_ERRORS.window);
  const sort = params.sort === undefined || params.sort === "" ? "asc" : params.sort;
  if (sort !== "asc" && sort !== "desc") throw new EtherscanError("Error! Invalid sort order");
  const startBlock = blockParam(params, options.from ?? "startblock", 0);
  const endBlock = blockParam(params, options.to ?? "endblock", Number.MAX_SAFE_INTEGER);
  return { page, offset: Math.min(offset, options.maxOffset), sort, startBlock, endBlock };
}

/** A 32-byte topic parameter, lowercase (absent or empty: undefined). */
export function topicParam(params: EtherscanParams, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === "") return undefined;
  if (!TOPIC.test(value)) throw new EtherscanError(`Error! Invalid ${name} format`);
  return value.toLowerCase();
}

/**
 * A block tag of the `proxy` module: `latest` (the default), `earliest`, `pending`, `safe`, `finalized` or a
 * hex number, as JSON-RPC takes it.
 */
export function tagParam(params: EtherscanParams, name = "tag"): string {
  const value = params[name];
  if (value === undefined || value === "") return "latest";
  if (["latest", "earliest", "pending", "safe", "finalized"].includes(value)) return value;
  if (/^0x[0-9a-fA-F]{1,16}$/.test(value)) return `0x${BigInt(value).toString(16)}`;
  throw new EtherscanError(`Error! Invalid ${name}`);
}

/** Hex data of a call (`data`), `0x` when absent. */
export function hexDataParam(params: EtherscanParams, name: string): `0x${string}` {
  const value = params[name];
  if (value === undefined || value === "") return "0x";
  if (!/^0x([0-9a-fA-F]{2})*$/.test(value)) throw new EtherscanError(`Error! Invalid ${name}`);
  return value.toLowerCase() as `0x${string}`;
}
