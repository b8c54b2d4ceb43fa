import type { Block, Hash, Transaction, TransactionReceipt } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { Address } from "../config/schema.ts";
import type { ChainTransaction } from "../decode/decodeTransaction.ts";
import { ReorgDetectedError } from "./errors.ts";

export type BlockHeader = { number: number; hash: Hash; parentHash: Hash; timestamp: Date };

export type FetchedBlock = { header: BlockHeader; transactions: ChainTransaction[] };

/**
 * Fetch the given transactions of one block with their receipts, choosing the cheapest calls
 * (Alchemy prices each at 20 CU): the full block (`eth_getBlockByNumber` with transactions: inputs, values,
 * timestamp, hash for reorg checks) plus either one `eth_getBlockReceipts` when two or more of its
 * transactions are wanted, or one `eth_getTransactionReceipt` for a single one. So a transaction costs at
 * most 40 CU, and a busy block 40 CU in all.
 *
 * Provider data is checked before it is trusted. Each answer on its own is checked by the chain client
 * (`chain/validateRpcResult.ts`: a receipt set repeating a log index, receipts of another block…). Here the
 * answers are checked against each other: every receipt must belong to this block (`blockHash` and
 * `blockNumber`) and to the wanted transaction at its index, and the block must have the hash the caller saw
 * in its logs; otherwise the chain moved between the calls (or the provider contradicts itself across them)
 * and `ReorgDetectedError` asks the caller to fetch again.
 */
export async function fetchBlockTransactions(
  chain: ChainClient,
  blockNumber: number,
  hashes: readonly Hash[],
  expectedBlockHash?: Hash,
): Promise<FetchedBlock> {
  const wanted = new Set(hashes.map((h) => h.toLowerCase()));
  const [block, receipts] = await Promise.all([
    chain.client.getBlock({ blockNumber: BigInt(blockNumber), includeTransactions: true }),
    wanted.size >= 2
      ? chain.client.getBlockReceipts({ blockNumber: BigInt(blockNumber) })
      : Promise.all([...wanted].map((hash) => chain.client.getTransactionReceipt({ hash: hash as Hash }))),
  ]);
  const header = toHeader(block);
  if (expectedBlockHash && header.hash !== expectedBlockHash.toLowerCase()) {
    throw new ReorgDetectedError(blockNumber, `logs saw ${expectedBlockHash}, block is ${header.hash}`);
  }
  const receiptByHash = new Map<string, TransactionReceipt>();
  for (const receipt of receipts) {
    if (receipt.blockHash.toLowerCase() !== header.hash || Number(receipt.blockNumber) !== header.number) {
      throw new ReorgDetectedError(
        blockNumber,
        `receipt of ${receipt.transactionHash} is from another block`,
      );
    }
    receiptByHash.set(receipt.transactionHash.toLowerCase(), receipt);
  }

  const transactions: ChainTransaction[] = [];
  for (const tx of block.transactions as Transaction[]) {
    const hash = tx.hash.toLowerCase();
    if (!wanted.has(hash)) continue;
    const receipt = receiptByHash.get(hash);
    if (!receipt) throw new ReorgDetectedError(blockNumber, `no receipt for ${hash}`);
    transactions.push(toChainTransaction(header, tx, receipt));
  }
  if (transactions.length !== wanted.size) {
    throw new ReorgDetectedError(blockNumber, "block does not contain every transaction its logs named");
  }
  return { header, transactions };
}

export function toHeader(block: Pick<Block, "number" | "hash" | "parentHash" | "timestamp">): BlockHeader {
  if (block.number === null || block.hash === null) {
    throw new ReorgDetectedError(-1, "pending block has no number or hash");
  }
  return {
    number: Number(block.number),
    hash: block.hash.toLowerCase() as Hash,
    parentHash: block.parentHash.toLowerCase() as Hash,
    timestamp: new Date(Number(block.timestamp) * 1000),
  };
}

/** Join a transaction and its receipt into the domain shape decoding works on (lowercase addresses). */
export function toChainTransaction(
  header: BlockHeader,
  tx: Transaction,
  receipt: TransactionReceipt,
): ChainTransaction {
  if (
    receipt.transactionHash.toLowerCase() !== tx.hash.toLowerCase() ||
    (tx.transactionIndex !== null && receipt.transactionIndex !== tx.transactionIndex)
  ) {
    throw new ReorgDetectedError(
      header.number,
      `receipt ${receipt.transactionHash} (index ${receipt.transactionIndex}) does not match ${tx.hash} (index ${tx.transactionIndex})`,
    );
  }
  return {
    hash: tx.hash.toLowerCase() as Hash,
    blockNumber: header.number,
    blockHash: header.hash,
    transactionIndex: receipt.transactionIndex,
    blockTimestamp: header.timestamp,
    from: lower(tx.from),
    to: tx.to ? lower(tx.to) : null,
    input: tx.input,
    value: tx.value,
    gasUsed: receipt.gasUsed,
    effectiveGasPrice: receipt.effectiveGasPrice ?? tx.gasPrice ?? 0n,
    status: receipt.status === "success",
    contractAddress: receipt.contractAddress ? lower(receipt.contractAddress) : null,
    logs: receipt.logs.map((log) => ({
      logIndex: log.logIndex,
      address: lower(log.address),
      topics: log.topics,
      data: log.data,
    })),
  };
}

const lower = (a: string) => a.toLowerCase() as Address;
