import {
  ALCHEMY_LOGS,
  ALCHEMY_RATE_BODY,
  INFURA_LOGS,
  INFURA_RATE,
  QUICKNODE_RANGE,
} from "../../src/chain/_test/providerMessages.ts";
import type { Random } from "../helpers/faultsRandom.ts";
import type { RpcFault } from "../helpers/rpcProxy.ts";

/**
 * The RPC faults the simulation draws from, by kind: transport and provider faults, and answers that
 * contradict themselves (a log whose blockHash is not its block's, duplicate log indexes, a receipt naming
 * another transaction), which the chain client's provider-data validation must refuse and retry (issue 8
 * item 2). `FAULT_INCONSISTENT=0` leaves the latter out.
 */
export const TRANSPORT_FAULT_KINDS = [
  "429 with Retry-After",
  "429 without Retry-After",
  "rate limit -32005",
  "range Alchemy",
  "range Infura",
  "range QuickNode",
  "http 500",
  "http 502",
  "http 503",
  "timeout",
  "dropped connection",
  "malformed JSON",
  "batch item error",
  "batch out of order",
] as const;

export const INCONSISTENT_FAULT_KINDS = [
  "inconsistent log blockHash",
  "inconsistent duplicate logIndex",
  "inconsistent receipt for another tx",
] as const;

export type RpcFaultKind = (typeof TRANSPORT_FAULT_KINDS)[number] | (typeof INCONSISTENT_FAULT_KINDS)[number];

/** Methods protoscan's writer calls while indexing, tracking and processing webhooks. */
const METHODS = [
  "eth_blockNumber",
  "eth_getBlockByNumber",
  "eth_getLogs",
  "eth_getBlockReceipts",
  "eth_getTransactionReceipt",
  "eth_getTransactionByHash",
  "eth_call",
] as const;

export type ArmedFault = { kind: RpcFaultKind; fault: RpcFault };

const hex = (n: number) => `0x${n.toString(16)}`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** The block range of an eth_getLogs call, or undefined. */
function logRange(params: unknown): { from: number; to: number } | undefined {
  const filter: unknown = Array.isArray(params) ? params[0] : undefined;
  if (!isRecord(filter) || typeof filter.fromBlock !== "string" || typeof filter.toBlock !== "string") return;
  return { from: Number(filter.fromBlock), to: Number(filter.toBlock) };
}

/**
 * A range refusal whose message is written for the call it refuses (Alchemy and Infura suggest a range
 * starting at the refused `fromBlock`): `when` sees the params first, the proxy reads `message` right after.
 */
function rangeRefusal(code: number, times: number, write: (range: { from: number; to: number }) => string) {
  let range = { from: 0, to: 0 };
  return {
    kind: "rpcError" as const,
    code,
    method: "eth_getLogs",
    times,
    when(params: unknown) {
      const r = logRange(params);
      if (!r || r.to <= r.from) return false; // a one-block range cannot shrink: never refuse it
      range = r;
      return true;
    },
    get message() {
      return write(range);
    },
  };
}

/**
 * Draw one fault to arm on the proxy. `served` counts the inconsistent answers actually served (a rewrite
 * that finds nothing to break leaves the answer as it was); `otherHash` names a real transaction other than
 * `not`, for receipts that name the wrong one.
 */
export function drawRpcFault(
  random: Random,
  options: {
    inconsistent: boolean;
    served: (kind: RpcFaultKind) => void;
    otherHash: (not: string) => string | undefined;
  },
): ArmedFault {
  const kinds: RpcFaultKind[] = [
    ...TRANSPORT_FAULT_KINDS,
    ...(options.inconsistent ? INCONSISTENT_FAULT_KINDS : []),
  ];
  const kind = random.pick(kinds);
  const method = random.pick(METHODS);
  const times = random.int(1, 3);
  const on = { method, times };
  const make = (): RpcFault => {
    switch (kind) {
      case "429 with Retry-After":
        return { kind: "http", status: 429, headers: { "retry-after": "1" }, body: ALCHEMY_RATE_BODY, ...on };
      case "429 without Retry-After":
        return { kind: "http", status: 429, body: "Too Many Requests", ...on };
      case "rate limit -32005":
        return { kind: "rpcError", code: -32005, message: INFURA_RATE, ...on };
      case "range Alchemy":
        return rangeRefusal(-32602, times, (r) => {
          const to = r.from + Math.max(0, Math.floor((r.to - r.from) / 2));
          return ALCHEMY_LOGS.replace("[0x0, 0x1f3f]", `[${hex(r.from)}, ${hex(to)}]`);
        });
      case "range Infura":
        return rangeRefusal(-32005, times, (r) =>
          INFURA_LOGS.replace(
            "[0x1, 0x2f]",
            `[${hex(r.from)}, ${hex(r.from + Math.floor((r.to - r.from) / 3))}]`,
          ),
        );
      case "range QuickNode":
        return rangeRefusal(-32614, times, () => QUICKNODE_RANGE);
      case "http 500":
        return { kind: "http", status: 500, body: "Internal Server Error", ...on };
      case "http 502":
        return {
          kind: "http",
          status: 502,
          body: "<html><body><h1>502 Bad Gateway</h1></body></html>",
          ...on,
        };
      case "http 503":
        return { kind: "http", status: 503, body: '{"error":"service unavailable"}', ...on };
      case "timeout":
        return { kind: "timeout", ...on, times: 1 };
      case "dropped connection":
        return { kind: "drop", ...on };
      case "malformed JSON":
        return { kind: "malformed", ...on };
      case "batch item error":
        return { kind: "rpcError", code: -32603, message: "internal error", ...on };
      case "batch out of order":
        // JSON-RPC 2.0 §6: a batch's answers may come in any order; clients match them by id.
        return {
          kind: "rewriteBody",
          times,
          rewrite: (answer) => {
            if (!Array.isArray(answer) || answer.length < 2) return answer;
            options.served(kind);
            return [...answer].reverse();
          },
        };
      case "inconsistent log blockHash":
        return {
          kind: "rewrite",
          method: random.pick(["eth_getLogs", "eth_getBlockReceipts", "eth_getTransactionReceipt"]),
          times,
          rewrite: (result) => {
            const logs = logsOf(result);
            const log = logs[0];
            if (!log) return result;
            options.served(kind);
            log.blockHash = `0x${"ba".repeat(32)}`;
            return result;
          },
        };
      case "inconsistent duplicate logIndex":
        return {
          kind: "rewrite",
          method: random.pick(["eth_getLogs", "eth_getBlockReceipts"]),
          times,
          rewrite: (result) => {
            const logs = logsOf(result);
            if (logs.length < 2 || logs[0]!.blockNumber !== logs[1]!.blockNumber) return result;
            options.served(kind);
            logs[1]!.logIndex = logs[0]!.logIndex;
            return result;
          },
        };
      case "inconsistent receipt for another tx":
        return {
          kind: "rewrite",
          method: random.pick(["eth_getBlockReceipts", "eth_getTransactionReceipt"]),
          times,
          rewrite: (result) => {
            const receipt = Array.isArray(result) ? result[0] : result;
            if (!isRecord(receipt) || typeof receipt.transactionHash !== "string") return result;
            const other = options.otherHash(receipt.transactionHash);
            if (other === undefined) return result;
            options.served(kind);
            receipt.transactionHash = other;
            return result;
          },
        };
    }
  };
  return { kind, fault: make() };
}

/** The log objects of an eth_getLogs result, a receipt, or a list of receipts (mutable, in order). */
function logsOf(result: unknown): Record<string, unknown>[] {
  if (!Array.isArray(result)) {
    return isRecord(result) && Array.isArray(result.logs) ? result.logs.filter(isRecord) : [];
  }
  return result.flatMap((item) =>
    isRecord(item) && Array.isArray(item.logs) ? item.logs.filter(isRecord) : isRecord(item) ? [item] : [],
  );
}
