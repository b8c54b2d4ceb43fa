import { type Hash, type RpcTransactionReceipt, TransactionReceiptNotFoundError } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { ChainTransaction } from "../decode/decodeTransaction.ts";
import { ReorgDetectedError } from "./errors.ts";
import {
  type BlockHeader,
  getFullBlock,
  getReceipt,
  rpcHeader,
  toChainTransaction,
} from "./fetchBlockTransactions.ts";

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
      getReceipt(chain, hash).catch((error: unknown) => {
        if (error instanceof TransactionReceiptNotFoundError) return null;
        throw error;
      }),
    ),
  );
  const pending: Hash[] = [];
  const byBlock = new Map<number, RpcTransactionReceipt[]>();
  results.forEach((receipt, i) => {
    if (!receipt) {
      pending.push(unique[i]!);
      return;
    }
    const number = Number(receipt.blockNumber);
    const list = byBlock.get(number);
    if (list) list.push(receipt);
    else byBlock.set(number, [receipt]);
  });

  const blocks = await Promise.all(
    [...byBlock.keys()].map((blockNumber) => getFullBlock(chain, blockNumber)),
  );
  const transactions: ChainTransaction[] = [];
  const headers: BlockHeader[] = [];
  for (const block of blocks) {
    const header = rpcHeader(block);
    headers.push(header);
    const txByHash = new Map(block.transactions.map((tx) => [tx.hash.toLowerCase(), tx]));
    const receipts = byBlock.get(header.number) ?? [];
    // Receipts fetched one by one are checked against each other too: one block's logs never share an index.
    const logIndexes = receipts.flatMap((r) => r.logs.map((l) => Number(l.logIndex)));
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
