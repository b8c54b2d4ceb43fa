import type { Hex } from "viem";
import type { Address } from "../config/schema.ts";
import type { AbiRegistry } from "./abiRegistry.ts";
import { actionType } from "./actionType.ts";
import { attributeProtocol } from "./attributeProtocol.ts";
import { decodeCall } from "./decodeCall.ts";
import { decodeLog } from "./decodeLog.ts";
import { decodeTransfer } from "./decodeTransfer.ts";

/** What decoding needs from the chain: the transaction, its receipt and its block, in domain types. */
export type ChainTransaction = {
  hash: Hex;
  blockNumber: number;
  blockHash: Hex;
  transactionIndex: number;
  blockTimestamp: Date;
  from: Address;
  to: Address | null;
  input: Hex;
  /** the sender's nonce */
  nonce: number;
  /** the gas limit the sender set */
  gas: bigint;
  value: bigint;
  gasUsed: bigint;
  /** gas used by this transaction and those before it in the block (receipt) */
  cumulativeGasUsed: bigint;
  effectiveGasPrice: bigint;
  status: boolean;
  contractAddress: Address | null;
  logs: readonly { logIndex: number; address: Address; topics: readonly Hex[]; data: Hex }[];
};

export type IndexedLog = {
  logIndex: number;
  address: Address;
  topics: Hex[];
  data: Hex;
  eventName: string | null;
  eventArgs: Record<string, unknown> | null;
};

export type IndexedTransfer = {
  logIndex: number;
  token: Address;
  from: Address;
  to: Address;
  amount: bigint;
};

/** A transaction ready to store: chain facts plus attribution, decoded call, decoded logs and transfers. */
export type IndexedTransaction = Omit<ChainTransaction, "logs"> & {
  protocol: string;
  actionType: string;
  functionName: string;
  functionArgs: Record<string, unknown>;
  logs: IndexedLog[];
  transfers: IndexedTransfer[];
};

/**
 * Decode one transaction (SPEC §3): attribute it, decode its call and every log, extract the transfers of
 * tracked tokens. Returns null when it touches no configured contract or tracked token. Never throws on
 * undecodable input: the call keeps its selector as `functionName` and `unknown` as `actionType`.
 */
export function decodeTransaction(
  registry: AbiRegistry,
  tx: ChainTransaction,
  hint?: string,
): IndexedTransaction | null {
  const protocol = attributeProtocol(
    registry,
    tx.to,
    tx.logs.map((l) => l.address),
    hint,
  );
  if (protocol === undefined) return null;

  const call = decodeCall(registry, tx.to, tx.input);
  const plainTransfer = tx.input === "0x" || tx.input.length < 10;
  const functionName = plainTransfer ? "transfer" : call.functionName;
  const action = plainTransfer
    ? "nativeTransfer"
    : call.decoded
      ? actionType(call.functionName, registry.actions.get(protocol), false)
      : "unknown";

  const logs: IndexedLog[] = [];
  const transfers: IndexedTransfer[] = [];
  for (const log of tx.logs) {
    const decoded = decodeLog(registry, log.topics, log.data);
    logs.push({
      logIndex: log.logIndex,
      address: log.address,
      topics: [...log.topics],
      data: log.data,
      eventName: decoded?.eventName ?? null,
      eventArgs: decoded?.args ?? null,
    });
    if (registry.tokens.has(log.address)) {
      const transfer = decodeTransfer(log.topics, log.data);
      if (transfer) transfers.push({ logIndex: log.logIndex, token: log.address, ...transfer });
    }
  }

  const { logs: _logs, ...facts } = tx;
  return { ...facts, protocol, actionType: action, functionName, functionArgs: call.args, logs, transfers };
}
