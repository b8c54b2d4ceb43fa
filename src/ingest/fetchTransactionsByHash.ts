import { type Hash, type Transaction, type TransactionReceipt, TransactionReceiptNotFoundError } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { ChainTransaction } from "../decode/decodeTransaction.ts";
import { ReorgDetectedError } from "./errors.ts";
import { type BlockHeader, toChainTransaction, toHeader } from "./fetchBlockTransactions.ts";

export type FetchedByHash = {
  transactions: ChainTransaction[];
  headers: BlockHeader[];
  /** hashes the node does not know as mined yet (unknown, or pending in the mempool) */
  pending: Hash[];
};

/**
 * Fetch transactions known only by hash (webhooks, track-tx): their receipts (20 CU each, batched), then
 * each distinct block once with full transactions (20 CU) for inputs, values and the timestamp. A hash
 * without a receipt is reported as pending, not as an error. Receipts must agree with their block (hash,
 * the transaction in it) and with each other (log indexes), else `ReorgDetectedError`: fetch again.
 */
export async function fetchTransactionsByHash(
  chain: ChainClient,
  hashes: readonly Hash[],
): Promise<FetchedByHash> {
  const unique = [...new Set(hashes.map((h) => h.toLowerCase() as Hash))];
  const results = await Promise.all(
    unique.map((hash) =>
      chain.client.getTransactionReceipt({ hash }).catch((error: unknown) => {
        if (error instanceof TransactionReceiptNotFoundError) return null;
        throw error;
      }),
    ),
  );
  const pending: Hash[] = [];
  const byBlock = new Map<bigint, TransactionReceipt[]>();
  results.forEach((receipt, i) => {
    if (!receipt) {
      pending.push(unique[i]!);
      return;
    }
    const list = byBlock.get(receipt.blockNumber);
    if (list) list.push(receipt);
    else byBlock.set(receipt.blockNumber, [receipt]);
  });

  const blocks = await Promise.all(
    [...byBlock.keys()].map((blockNumber) =>
      chain.client.getBlock({ blockNumber, includeTransactions: true }),
    ),
  );
  const transactions: ChainTransaction[] = [];
  const headers: BlockHeader[] = [];
  for (const block of blocks) {
    const header = toHeader(block);
    headers.push(header);
    const txByHash = new Map((block.transactions as Transaction[]).map((tx) => [tx.hash.toLowerCase(), tx]));
    const receipts = byBlock.get(BigInt(header.number)) ?? [];
    // Receipts fetched one by one are checked against each other too: one block's logs never share an index.
    const logIndexes = receipts.flatMap((r) => r.logs.map((l) => l.logIndex));
    if (new Set(logIndexes).size !== logIndexes.length) {
      throw new ReorgDetectedError(header.number, "receipts of one block repeat a log index");
    }
    for (const receipt of receipts) {
      const tx = txByHash.get(receipt.transactionHash.toLowerCase());
      if (!tx || receipt.blockHash.toLowerCase() !== header.hash) {
        throw new ReorgDetectedError(
          header.number,
          `receipt of ${receipt.transactionHash} is not in block ${header.hash}`,
        );
      }
      transactions.push(toChainTransaction(header, tx, receipt));
    }
  }
  return { transactions, headers, pending };
}
