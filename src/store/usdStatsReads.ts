import { and, desc, inArray } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { blocks, tokenBalances } from "./schema.ts";

/**
 * Reads behind the USD statistics (SPEC §7 `tvl`): key reads of the balance cache, and the newest stored
 * block's time (where the trailing-24-hours window ends on a chain ahead of the clock). The volume side is
 * in `transactionVolumes.ts`.
 */

/** The time of the newest stored block (the chain's "now" as protoscan knows it), or null before any. */
export async function getNewestBlockTime(db: Db): Promise<Date | null> {
  const [row] = await db
    .select({ timestamp: blocks.timestamp })
    .from(blocks)
    .orderBy(desc(blocks.number))
    .limit(1);
  return row?.timestamp ?? null;
}

export type HolderBalance = { token: string; holder: string; balance: bigint };

/** Cached balances of these holders in these tokens (lowercase), by primary key; absent pairs are zero. */
export async function getHolderBalances(
  db: Db,
  tokens: readonly string[],
  holders: readonly string[],
): Promise<HolderBalance[]> {
  if (tokens.length === 0 || holders.length === 0) return [];
  return db
    .select({
      token: tokenBalances.tokenAddress,
      holder: tokenBalances.holder,
      balance: tokenBalances.balance,
    })
    .from(tokenBalances)
    .where(
      and(inArray(tokenBalances.tokenAddress, [...tokens]), inArray(tokenBalances.holder, [...holders])),
    );
}
