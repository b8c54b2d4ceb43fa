import type { IndexedTransaction } from "../decode/decodeTransaction.ts";
import type { addressTransactions, logs, tokenTransfers, transactions } from "./schema.ts";

/**
 * Domain -> row conversion, in exactly one place (Ponder `sync-store/encode.ts`). Every address and hash is
 * lowercased here, whatever the caller passed.
 */

export type IngestSource = "poll" | "webhook" | "track";

export function encodeTransaction(
  tx: IndexedTransaction,
  source: IngestSource,
): typeof transactions.$inferInsert {
  return {
    hash: tx.hash.toLowerCase(),
    blockNumber: tx.blockNumber,
    blockHash: tx.blockHash.toLowerCase(),
    transactionIndex: tx.transactionIndex,
    blockTimestamp: tx.blockTimestamp,
    fromAddress: tx.from.toLowerCase(),
    toAddress: tx.to?.toLowerCase() ?? null,
    contractAddress: tx.contractAddress?.toLowerCase() ?? null,
    valueWei: tx.value,
    gasUsed: tx.gasUsed,
    gasPrice: tx.effectiveGasPrice,
    status: tx.status,
    protocol: tx.protocol,
    actionType: tx.actionType,
    functionName: tx.functionName,
    functionArgs: tx.functionArgs,
    nonce: tx.nonce,
    gasLimit: tx.gas,
    input: tx.input.toLowerCase(),
    cumulativeGasUsed: tx.cumulativeGasUsed,
    methodId: methodIdOf(tx.input),
    source,
  };
}

export function encodeLogs(tx: IndexedTransaction): (typeof logs.$inferInsert)[] {
  const txHash = tx.hash.toLowerCase();
  return tx.logs.map((log) => ({
    txHash,
    logIndex: log.logIndex,
    blockNumber: tx.blockNumber,
    transactionIndex: tx.transactionIndex,
    address: log.address.toLowerCase(),
    topics: log.topics.map((t) => t.toLowerCase()),
    data: log.data.toLowerCase(),
    eventName: log.eventName,
    eventArgs: log.eventArgs,
  }));
}

export function encodeTransfers(tx: IndexedTransaction): (typeof tokenTransfers.$inferInsert)[] {
  const txHash = tx.hash.toLowerCase();
  return tx.transfers.map((t) => ({
    txHash,
    logIndex: t.logIndex,
    blockNumber: tx.blockNumber,
    transactionIndex: tx.transactionIndex,
    blockTimestamp: tx.blockTimestamp,
    tokenAddress: t.token.toLowerCase(),
    fromAddress: t.from.toLowerCase(),
    toAddress: t.to.toLowerCase(),
    amount: t.amount,
  }));
}

/** Every address taking part in the transaction: sender, recipient, created contract, transfer parties. */
export function encodeAddressTransactions(
  tx: IndexedTransaction,
): (typeof addressTransactions.$inferInsert)[] {
  const parties = new Set<string>([tx.from.toLowerCase()]);
  if (tx.to) parties.add(tx.to.toLowerCase());
  if (tx.contractAddress) parties.add(tx.contractAddress.toLowerCase());
  for (const t of tx.transfers) {
    parties.add(t.from.toLowerCase());
    parties.add(t.to.toLowerCase());
  }
  parties.delete(ZERO_ADDRESS);
  const txHash = tx.hash.toLowerCase();
  return [...parties].map((address) => ({
    address,
    txHash,
    blockNumber: tx.blockNumber,
    transactionIndex: tx.transactionIndex,
    protocol: tx.protocol,
  }));
}

/** The first four bytes of call data, as Etherscan's `methodId` shows them: `0x` for none (or fewer). */
export function methodIdOf(input: string): string {
  return input.length >= 10 ? input.slice(0, 10).toLowerCase() : "0x";
}

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
