import { and, eq, lt, sql } from "drizzle-orm";
import type { Address } from "../config/schema.ts";
import type { Db } from "./createDatabase.ts";
import { ZERO_ADDRESS } from "./encode.ts";
import type { Tx } from "./ingestTransaction.ts";
import { insertRows } from "./insertRows.ts";
import { tokenBalances, type tokenTransfers } from "./schema.ts";

/** A balance read from the chain (`balanceOf` at `blockNumber`), for tokens kept in `call` mode. */
export type BalanceReading = { token: Address; holder: Address; balance: bigint; blockNumber: number };

/**
 * A signed change to one cached balance of a token kept in `delta` mode (lowercase addresses), and the
 * latest block it comes from.
 */
export type BalanceDelta = { token: string; holder: string; delta: bigint; blockNumber: number };

/** The sum of deltas per (token, holder), built with `addDelta`. */
export type BalanceDeltas = Map<string, BalanceDelta>;

/**
 * Add `delta` to the (token, holder) entry of `deltas`, keeping the latest block; the zero address and zero
 * deltas are left out (mints and burns move no balance of theirs).
 */
export function addDelta(
  deltas: BalanceDeltas,
  token: string,
  holder: string,
  delta: bigint,
  blockNumber: number,
): void {
  if (holder === ZERO_ADDRESS || delta === 0n) return;
  const key = `${token}:${holder}`;
  const entry = deltas.get(key);
  if (entry) {
    entry.delta += delta;
    entry.blockNumber = Math.max(entry.blockNumber, blockNumber);
  } else deltas.set(key, { token, holder, delta, blockNumber });
}

/** The balance deltas of `transfers` for the tokens kept by delta arithmetic, one per (token, holder). */
export function balanceDeltas(
  transfers: readonly TransferRow[],
  deltaTokens: ReadonlySet<string>,
): BalanceDelta[] {
  const deltas: BalanceDeltas = new Map();
  for (const t of transfers) {
    if (!deltaTokens.has(t.tokenAddress)) continue;
    addDelta(deltas, t.tokenAddress, t.fromAddress, -t.amount, t.blockNumber);
    addDelta(deltas, t.tokenAddress, t.toAddress, t.amount, t.blockNumber);
  }
  return [...deltas.values()];
}

/** What a transfer row (stored, or encoded to be) says about balances. */
type TransferRow = Pick<
  typeof tokenTransfers.$inferInsert,
  "tokenAddress" | "fromAddress" | "toAddress" | "amount" | "blockNumber"
>;

/** Add signed deltas to cached balances (creating rows as needed). Used on ingest and, negated, on rollback. */
export async function applyDeltas(tx: Tx | Db, deltas: readonly BalanceDelta[]): Promise<void> {
  await insertRows(
    tx,
    tokenBalances,
    deltas.map((d) => ({
      tokenAddress: d.token,
      holder: d.holder,
      balance: d.delta,
      blockNumber: d.blockNumber,
    })),
    {
      onConflict: sql`on conflict (token_address, holder) do update set
        balance = ${tokenBalances.balance} + excluded.balance,
        block_number = greatest(${tokenBalances.blockNumber}, excluded.block_number)`,
    },
  );
}

/**
 * Write `balanceOf` readings; an older reading never replaces a newer one, unless `replace` (after a
 * rollback, when the newer ones came from orphaned blocks).
 */
export async function upsertReadings(
  tx: Tx | Db,
  readings: readonly BalanceReading[],
  options: { replace?: boolean } = {},
): Promise<void> {
  await insertRows(
    tx,
    tokenBalances,
    readings.map((r) => ({
      tokenAddress: r.token.toLowerCase(),
      holder: r.holder.toLowerCase(),
      balance: r.balance,
      blockNumber: r.blockNumber,
    })),
    {
      onConflict: sql`on conflict (token_address, holder) do update set
        balance = excluded.balance, block_number = excluded.block_number${
          options.replace ? sql`` : sql` where ${tokenBalances.blockNumber} <= excluded.block_number`
        }`,
    },
  );
}

/** Stamp cached balances as checked at `blockNumber` without changing them (their `balanceOf` failed). */
export async function touchBalances(
  db: Db,
  pairs: readonly { token: string; holder: string }[],
  blockNumber: number,
): Promise<void> {
  for (const p of pairs) {
    await db
      .update(tokenBalances)
      .set({ blockNumber })
      .where(
        and(
          eq(tokenBalances.tokenAddress, p.token),
          eq(tokenBalances.holder, p.holder),
          lt(tokenBalances.blockNumber, blockNumber),
        ),
      );
  }
}
