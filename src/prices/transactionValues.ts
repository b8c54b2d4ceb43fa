import { formatUnits } from "viem";
import type { Config } from "../config/schema.ts";
import { protocolAddresses } from "../stats/protocolAddresses.ts";
import type { PriceHistory } from "./createPriceHistory.ts";

/** What valuing needs of a stored token transfer (lowercase addresses). */
export type TransferToValue = {
  logIndex: number;
  tokenAddress: string;
  fromAddress: string;
  toAddress: string;
  amount: bigint;
};

/**
 * What valuing needs of a stored transaction and its tracked-token transfers (a `TransactionSummary` of the
 * store, or rows about to be stored, fit as they are).
 */
export type TransactionToValue = {
  tx: { hash: string; blockNumber: number; blockTimestamp: Date; protocol: string };
  transfers: readonly TransferToValue[];
};

/** A transaction's USD value at its block time (SPEC §10.2), and each of its transfers' by log index. */
export type TransactionValue = { valueUsd: number | null; transfers: ReadonlyMap<number, number | null> };

/** No transfer valued: what a transaction without tracked-token transfers, or without prices, shows. */
export const NO_VALUE: TransactionValue = { valueUsd: null, transfers: new Map() };

/**
 * `amount / 10^decimals x usd` (SPEC §10.2): the amount scaled exactly from its bigint (a decimal string),
 * floats only for the USD product.
 */
export function transferValueUsd(amount: bigint, decimals: number, usd: number): number {
  return Number(formatUnits(amount, decimals)) * usd;
}

/**
 * SPEC §7's per-transaction rule on valued transfers: the larger of the USD flowing into the protocol's
 * addresses and out of them (sums over the transfers; an unpriced one counts 0); when no transfer touches
 * them, the largest transfer's value; null when no transfer is priced.
 */
export function transactionValueUsd(
  transfers: readonly { fromAddress: string; toAddress: string; valueUsd: number | null }[],
  ownAddresses: ReadonlySet<string>,
): number | null {
  if (!transfers.some((t) => t.valueUsd !== null)) return null;
  let into = 0;
  let outOf = 0;
  let flow = false;
  let largest = 0;
  for (const t of transfers) {
    const usd = t.valueUsd ?? 0;
    if (ownAddresses.has(t.toAddress)) {
      into += usd;
      flow = true;
    }
    if (ownAddresses.has(t.fromAddress)) {
      outOf += usd;
      flow = true;
    }
    if (usd > largest) largest = usd;
  }
  return flow ? Math.max(into, outOf) : largest;
}

/** Values transactions at their block times: built once per process from the configuration. */
export type TransactionValuer = (
  txs: readonly TransactionToValue[],
) => Promise<Map<string, TransactionValue>>;

/**
 * Value transactions and their transfers at block time (SPEC §10.2) with one `pricesAt` call for all of them
 * (each transfer's token at its transaction's block). Keyed by transaction hash.
 */
export function createTransactionValuer(config: Config, history: PriceHistory): TransactionValuer {
  const decimals = new Map(config.tokens.map((t) => [t.address as string, t.decimals]));
  const own = new Map(config.protocols.map((p) => [p.id, new Set(protocolAddresses(p))]));
  const none = new Set<string>();
  return async (txs) => {
    const flat = txs.flatMap(({ tx, transfers }) => transfers.map((transfer) => ({ tx, transfer })));
    const prices = await history.pricesAt(
      flat.map(({ tx, transfer }) => ({
        token: transfer.tokenAddress,
        time: tx.blockTimestamp,
        blockNumber: tx.blockNumber,
      })),
    );
    const values = new Map<string, { fromAddress: string; toAddress: string; valueUsd: number | null }[]>();
    const byLog = new Map<string, Map<number, number | null>>();
    flat.forEach(({ tx, transfer }, i) => {
      const price = prices[i];
      const tokenDecimals = decimals.get(transfer.tokenAddress) ?? 18;
      const valueUsd = price ? transferValueUsd(transfer.amount, tokenDecimals, price.usd) : null;
      const list = values.get(tx.hash) ?? [];
      list.push({ fromAddress: transfer.fromAddress, toAddress: transfer.toAddress, valueUsd });
      values.set(tx.hash, list);
      const logs = byLog.get(tx.hash) ?? new Map<number, number | null>();
      logs.set(transfer.logIndex, valueUsd);
      byLog.set(tx.hash, logs);
    });
    return new Map(
      txs.map(({ tx }) => [
        tx.hash,
        {
          valueUsd: transactionValueUsd(values.get(tx.hash) ?? [], own.get(tx.protocol) ?? none),
          transfers: byLog.get(tx.hash) ?? new Map(),
        },
      ]),
    );
  };
}
