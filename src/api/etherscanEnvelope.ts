/**
 * Etherscan's answer shapes (SPEC §11, docs/etherscan.md): every answer of `/api` and `/v2/api` is HTTP 200
 * with either the envelope `{status, message, result}` or, for the `proxy` module, a JSON-RPC object.
 */

/** The two paths of the Etherscan-compatible API: V1's `/api` and V2's `/v2/api` (which requires `chainid`). */
export const ETHERSCAN_PATHS: readonly string[] = ["/api", "/v2/api"];

export type Envelope = { status: "0" | "1"; message: string; result: unknown };

export type JsonRpcAnswer =
  | { jsonrpc: "2.0"; id: number; result: unknown }
  | { jsonrpc: "2.0"; id: number; error: { code: number; message: string; data?: unknown } };

export type EtherscanAnswer = Envelope | JsonRpcAnswer;

/** The error texts of Etherscan's API that protoscan answers, word for word (SPEC §11). */
export const ETHERSCAN_ERRORS = {
  module: "Error! Missing Or invalid Module name",
  action: "Error! Missing Or invalid Action name",
  address: "Error! Invalid address format",
  txhash: "Error! Invalid txhash format",
  apiKey: "Invalid API Key",
  rateLimit: "Max rate limit reached",
  window: "Result window is too large, PageNo x Offset size must be less than or equal to 10000",
  chainId:
    "Missing or unsupported chainid parameter (required for v2 api), please see chainlist for the list of supported chainids",
  notVerified: "Contract source code not verified",
} as const;

/** A request Etherscan would refuse: answered `{"status":"0","message":"NOTOK","result":<text>}`. */
export class EtherscanError extends Error {
  readonly result: string;

  constructor(result: string) {
    super(result);
    this.name = "EtherscanError";
    this.result = result;
  }
}

/** `{"status":"1","message":"OK","result":…}`. */
export function ok(result: unknown): Envelope {
  return { status: "1", message: "OK", result };
}

/** A list, or Etherscan's empty answer for it: `status` `0` with `empty` as the message and `[]`. */
export function list(
  rows: readonly unknown[],
  empty: "No transactions found" | "No records found",
): Envelope {
  return rows.length === 0 ? { status: "0", message: empty, result: [] } : ok(rows);
}

export function notOk(result: string): Envelope {
  return { status: "0", message: "NOTOK", result };
}

/** A JSON-RPC answer of the `proxy` module; Etherscan numbers every one `id` 1. */
export function rpcResult(result: unknown): JsonRpcAnswer {
  return { jsonrpc: "2.0", id: 1, result };
}

export function rpcError(code: number, message: string, data?: unknown): JsonRpcAnswer {
  return { jsonrpc: "2.0", id: 1, error: data === undefined ? { code, message } : { code, message, data } };
}
