import { and, gt, inArray, sql } from "drizzle-orm";
import { groupBy } from "../internal/groupBy.ts";
import { addDelta, applyDeltas, type BalanceDeltas } from "./balanceWrites.ts";
import type { Db } from "./createDatabase.ts";
import { ZERO_ADDRESS } from "./encode.ts";
import { ingestTransaction } from "./ingestTransaction.ts";
import { writeOutbox } from "./outbox.ts";
import { addressTransactions, blocks, indexerCursor, logs, tokenTransfers, transactions } from "./schema.ts";

export type RemovedTransaction = {
  hash: string;
  blockNumber: number;
  blockHash: string;
  protocol: string;
  source: string;
  /** addresses that took part (for WebSocket address topics) */
  parties: string[];
  /** tracked tokens it transferred (for WebSocket token topics) */
  tokens: string[];
};

export type RollbackResult = {
  removed: RemovedTransaction[];
  /** (token, holder) pairs of `call`-mode tokens whose balances must be read again */
  staleBalances: { token: string; holder: string }[];
};

/**
 * Delete everything stored from orphaned blocks (SPEC §3.4): either every block after `after`, or the given
 * block numbers. Balances of delta-mode tokens are restored exactly by negating the removed transfers;
 * call-mode pairs are returned so the caller reads them again from the canonical chain. With `outbox`, the
 * removals are announced in the fan-out outbox in the same transaction (PostgreSQL).
 */
export async function removeBlocks(
  db: Db,
  target: { after: number } | { numbers: readonly number[] },
  deltaTokens: ReadonlySet<string>,
  cursorName?: string,
  options: { outbox?: boolean } = {},
): Promise<RollbackResult> {
  const where = <T extends { blockNumber: unknown }>(col: T["blockNumber"]) =>
    "after" in target
      ? gt(col as typeof transactions.blockNumber, target.after)
      : inArray(col as typeof transactions.blockNumber, [...target.numbers]);
  if ("numbers" in target && target.numbers.length === 0) return { removed: [], staleBalances: [] };

  return ingestTransaction(db, async (tx) => {
    const txRows = await tx
      .select({
        hash: transactions.hash,
        blockNumber: transactions.blockNumber,
        blockHash: transactions.blockHash,
        protocol: transactions.protocol,
        source: transactions.source,
      })
      .from(transactions)
      .where(where(transactions.blockNumber))
      .orderBy(transactions.blockNumber, transactions.transactionIndex);
    const transferRows = await tx.select().from(tokenTransfers).where(where(tokenTransfers.blockNumber));
    const partyRows = await tx
      .select({ address: addressTransactions.address, txHash: addressTransactions.txHash })
      .from(addressTransactions)
      .where(where(addressTransactions.blockNumber));

    const deltas: BalanceDeltas = new Map();
    const stale = new Map<string, { token: string; holder: string }>();
    for (const t of transferRows) {
      if (deltaTokens.has(t.tokenAddress)) {
        addDelta(deltas, t.tokenAddress, t.fromAddress, t.amount, 0);
        addDelta(deltas, t.tokenAddress, t.toAddress, -t.amount, 0);
      } else {
        for (const holder of [t.fromAddress, t.toAddress]) {
          if (holder !== ZERO_ADDRESS)
            stale.set(`${t.tokenAddress}:${holder}`, { token: t.tokenAddress, holder });
        }
      }
    }

    await tx.delete(logs).where(where(logs.blockNumber));
    await tx.delete(tokenTransfers).where(where(tokenTransfers.blockNumber));
    await tx.delete(addressTransactions).where(where(addressTransactions.blockNumber));
    await tx.delete(transactions).where(where(transactions.blockNumber));
    await tx.delete(blocks).where(where(blocks.number));
    await applyDeltas(tx, [...deltas.values()]);
    if ("after" in target && cursorName) {
      await tx
        .update(indexerCursor)
        .set({ blockNumber: target.after, updatedAt: new Date() })
        .where(and(sql`${indexerCursor.name} = ${cursorName}`, gt(indexerCursor.blockNumber, target.after)));
    }

    const parties = groupBy(partyRows, (r) => r.txHash);
    const tokensOf = groupBy(transferRows, (r) => r.txHash);
    const removed = txRows.map((r) => ({
      ...r,
      parties: (parties.get(r.hash) ?? []).map((p) => p.address),
      tokens: [...new Set((tokensOf.get(r.hash) ?? []).map((t) => t.tokenAddress))],
    }));
    if (options.outbox) {
      await writeOutbox(
        tx,
        removed.map((r) => ({
          kind: "removed",
          txHash: r.hash,
          blockNumber: r.blockNumber,
          blockHash: r.blockHash,
          detail: { protocol: r.protocol, parties: r.parties, tokens: r.tokens },
        })),
      );
    }
    return { removed, staleBalances: [...stale.values()] };
  });
}
