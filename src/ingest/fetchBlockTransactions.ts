import {
  type Block,
  BlockNotFoundError,
  type Hash,
  numberToHex,
  type RpcBlock,
  type RpcTransaction,
  type RpcTransactionReceipt,
  TransactionReceiptNotFoundError,
} from "viem";
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
    getFullBlock(chain, blockNumber),
    wanted.size >= 2
      ? getBlockReceipts(chain, blockNumber)
      : Promise.all([...wanted].map((hash) => getReceipt(chain, hash as Hash))),
  ]);
  const header = rpcHeader(block);
  if (expectedBlockHash && header.hash !== expectedBlockHash.toLowerCase()) {
    throw new ReorgDetectedError(blockNumber, `logs saw ${expectedBlockHash}, block is ${header.hash}`);
  }
  const receiptByHash = new Map<string, RpcTransactionReceipt>();
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
  for (const tx of block.transactions) {
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

/*
 * Blocks and receipts are read as the node's JSON (RpcBlock, RpcTransactionReceipt) and converted here, once,
 * to what decoding needs (`toChainTransaction`): viem's formatters would first copy every field of every
 * transaction, receipt and log into objects of their own (nonces, signatures, blooms…), a backfill's largest
 * garbage (docs/performance.md, "Indexer backfill"). The answers are checked by the chain client as viem's
 * would be (chain/validateRpcResult.ts).
 */

/** `eth_getBlockByNumber` with full transactions. */
export async function getFullBlock(
  chain: ChainClient,
  blockNumber: number,
): Promise<RpcBlock<"latest", true>> {
  const block = await chain.request<RpcBlock<"latest", true> | null>("eth_getBlockByNumber", [
    numberToHex(blockNumber),
    true,
  ]);
  if (!block) throw new BlockNotFoundError({ blockNumber: BigInt(blockNumber) });
  return block;
}

async function getBlockReceipts(chain: ChainClient, blockNumber: number): Promise<RpcTransactionReceipt[]> {
  const receipts = await chain.request<RpcTransactionReceipt[] | null>("eth_getBlockReceipts", [
    numberToHex(blockNumber),
  ]);
  if (!receipts) throw new BlockNotFoundError({ blockNumber: BigInt(blockNumber) });
  return receipts;
}

/** `eth_getTransactionReceipt`; `TransactionReceiptNotFoundError` when the node has none (not mined). */
export async function getReceipt(chain: ChainClient, hash: Hash): Promise<RpcTransactionReceipt> {
  const receipt = await chain.request<RpcTransactionReceipt | null>("eth_getTransactionReceipt", [hash]);
  if (!receipt) throw new TransactionReceiptNotFoundError({ hash });
  return receipt;
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

/** `toHeader` of the node's JSON. */
export function rpcHeader(
  block: Pick<RpcBlock, "number" | "hash" | "parentHash" | "timestamp">,
): BlockHeader {
  return toHeader({
    number: block.number === null ? null : BigInt(block.number),
    hash: block.hash,
    parentHash: block.parentHash,
    timestamp: BigInt(block.timestamp),
  });
}

/**
 * Join a transaction and its receipt, as the node gave them, into the domain shape decoding works on
 * (lowercase addresses, bigint amounts): the one place RPC hex becomes domain values on the ingest path.
 */
export function toChainTransaction(
  header: BlockHeader,
  tx: RpcTransaction,
  receipt: RpcTransactionReceipt,
): ChainTransaction {
  const index = Number(receipt.transactionIndex);
  if (
    receipt.transactionHash.toLowerCase() !== tx.hash.toLowerCase() ||
    (tx.transactionIndex !== null && Number(tx.transactionIndex) !== index)
  ) {
    throw new ReorgDetectedError(
      header.number,
      `receipt ${receipt.transactionHash} (index ${index}) does not match ${tx.hash} (index ${tx.transactionIndex === null ? null : Number(tx.transactionIndex)})`,
    );
  }
  const gasPrice = receipt.effectiveGasPrice ?? tx.gasPrice;
  return {
    hash: tx.hash.toLowerCase() as Hash,
    blockNumber: header.number,
    blockHash: header.hash,
    transactionIndex: index,
    blockTimestamp: header.timestamp,
    from: lower(tx.from),
    to: tx.to ? lower(tx.to) : null,
    input: tx.input,
    nonce: Number(tx.nonce),
    gas: BigInt(tx.gas),
    value: BigInt(tx.value),
    gasUsed: BigInt(receipt.gasUsed),
    cumulativeGasUsed: BigInt(receipt.cumulativeGasUsed),
    effectiveGasPrice: gasPrice ? BigInt(gasPrice) : 0n,
    status: receipt.status === "0x1",
    contractAddress: receipt.contractAddress ? lower(receipt.contractAddress) : null,
    logs: receipt.logs.map((log) => ({
      logIndex: Number(log.logIndex),
      address: lower(log.address),
      topics: log.topics,
      data: log.data,
    })),
  };
}

const lower = (a: string) => a.toLowerCase() as Address;
