import { getAddress } from "viem";
import type { Address, Config, TokenConfig } from "../config/schema.ts";
import { tokensByAddress } from "../config/tokensByAddress.ts";
import {
  NO_VALUE,
  type TransactionValue,
  type TransactionValuer,
  type TransferToValue,
} from "../prices/transactionValues.ts";
import type { logs, tokenTransfers, transactions } from "../store/schema.ts";
import type { SummaryTx } from "../store/transactionSummaries.ts";
import type { TransactionJson } from "./schemas/transaction.ts";

/** A stored row (or what a summary shows of it) or an insert row about to be stored. */
type TxRow = SummaryTx | (typeof transactions.$inferInsert & { source: string });
/** What the Transaction resource shows of a log (decoded ones only) and of a transfer: stored or insert rows fit. */
type LogRow = Pick<typeof logs.$inferInsert, "logIndex" | "address" | "eventName" | "eventArgs">;
type TransferRow = Pick<
  typeof tokenTransfers.$inferInsert,
  "logIndex" | "tokenAddress" | "fromAddress" | "toAddress" | "amount"
>;

/**
 * Row -> API JSON for the Transaction resource (SPEC §4), the one place that shape is built: the HTTP
 * routes and the WebSocket broadcasts both use it. Addresses leave EIP-55, hashes lowercase, uint256 as
 * decimal strings, times as ISO with milliseconds. `value` is the transaction's USD value at its block time
 * and its transfers' (prices/transactionValues.ts; `NO_VALUE` when not valued).
 */
export function toTransactionJson(
  tx: TxRow,
  logRows: readonly LogRow[],
  transferRows: readonly TransferRow[],
  tokens: ReadonlyMap<string, TokenConfig>,
  value: TransactionValue,
): TransactionJson {
  return {
    txHash: tx.hash,
    blockNumber: tx.blockNumber,
    blockHash: tx.blockHash,
    transactionIndex: tx.transactionIndex,
    blockTimestamp: tx.blockTimestamp.toISOString(),
    fromAddress: checksum(tx.fromAddress),
    toAddress: tx.toAddress ? checksum(tx.toAddress) : null,
    contractAddress: tx.contractAddress ? checksum(tx.contractAddress) : null,
    valueWei: tx.valueWei.toString(),
    gasUsed: tx.gasUsed.toString(),
    gasPrice: tx.gasPrice.toString(),
    status: tx.status,
    protocol: tx.protocol,
    actionType: tx.actionType,
    functionName: tx.functionName,
    decodedData: {
      args: tx.functionArgs,
      events: [...logRows]
        .sort((a, b) => a.logIndex - b.logIndex)
        .filter((l) => l.eventName)
        .map((l) => ({
          name: l.eventName!,
          args: l.eventArgs ?? {},
          logIndex: l.logIndex,
          address: checksum(l.address),
        })),
    },
    tokenTransfers: [...transferRows]
      .sort((a, b) => a.logIndex - b.logIndex)
      .map((t) => {
        const token = tokens.get(t.tokenAddress);
        return {
          tokenAddress: checksum(t.tokenAddress),
          tokenSymbol: token?.symbol ?? "",
          fromAddress: checksum(t.fromAddress),
          toAddress: checksum(t.toAddress),
          amount: t.amount.toString(),
          decimals: token?.decimals ?? 18,
          logIndex: t.logIndex,
          valueUsd: value.transfers.get(t.logIndex) ?? null,
        };
      }),
    valueUsd: value.valueUsd,
    source: tx.source,
  };
}

/** Addresses checksummed so far (see `checksum`); emptied when it reaches `CHECKSUM_CACHE_SIZE`. */
const checksums = new Map<string, string>();
const CHECKSUM_CACHE_SIZE = 100_000;

/**
 * EIP-55 form of an address (any case), memoized: a page of transactions checksums a hundred addresses or
 * more, mostly the same few contracts and parties, and each `getAddress` is a keccak256. viem's own cache
 * keeps 8,192 entries behind an LRU whose every hit re-inserts the key; a plain Map lookup is cheaper, and
 * dropping the whole map when it is full bounds memory without per-hit bookkeeping.
 */
export function checksum(address: string): string {
  let out = checksums.get(address);
  if (out === undefined) {
    out = getAddress(address as Address);
    if (checksums.size >= CHECKSUM_CACHE_SIZE) checksums.clear();
    checksums.set(address, out);
  }
  return out;
}

/**
 * `toTransactionJson` with the configured tokens bound: what the WebSocket hub and the PostgreSQL fan-out are
 * given (realtime/serverMessages.ts `TransactionJsonOf`), so a broadcast carries the JSON of `GET /api/tx/:hash`,
 * with `value` its USD values at block time (`NO_VALUE` when not valued).
 */
export function transactionJsonOf(
  config: Pick<Config, "tokens">,
): (
  tx: TxRow,
  logRows: readonly LogRow[],
  transferRows: readonly TransferRow[],
  value?: TransactionValue,
) => TransactionJson {
  const tokens = tokensByAddress(config);
  return (tx, logRows, transferRows, value = NO_VALUE) =>
    toTransactionJson(tx, logRows, transferRows, tokens, value);
}

/** A stored transaction with its logs and transfers, as the store's summaries and the ingest details hold them. */
export type TransactionRows = {
  tx: Parameters<typeof toTransactionJson>[0];
  logs: readonly LogRow[];
  transfers: readonly TransferRow[];
};

/**
 * Several transactions as JSON, valued at their block times with one call of `value` for them all (a page of
 * 100 transactions costs a few statements, not one per transfer).
 */
export async function toTransactionsJson(
  rows: readonly TransactionRows[],
  tokens: ReadonlyMap<string, TokenConfig>,
  value: TransactionValuer,
): Promise<TransactionJson[]> {
  const values = await value(rows.map((r) => ({ tx: r.tx, transfers: r.transfers.map(toValued) })));
  return rows.map((r) =>
    toTransactionJson(r.tx, r.logs, r.transfers, tokens, values.get(r.tx.hash) ?? NO_VALUE),
  );
}

function toValued(t: TransferRow): TransferToValue {
  return {
    logIndex: t.logIndex,
    tokenAddress: t.tokenAddress,
    fromAddress: t.fromAddress,
    toAddress: t.toAddress,
    amount: t.amount,
  };
}
