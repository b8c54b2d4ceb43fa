import { sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { historyHolderHours, historyHolders, tokenTransfers } from "./schema.ts";

/**
 * Make the followed holders (`history_holders`) exactly `addresses` (lowercase: the configured protocols'
 * `tvlAddresses`): a holder no longer listed loses its hours, a new one gets its hours summed from the stored
 * transfers. `token_transfers` is locked against writes meanwhile (SHARE mode waits for the writers in flight),
 * so no transfer is stored between the sums and the holder's arrival, which the trigger would miss.
 * Returns the holders added and removed.
 */
export async function syncHistoryHolders(
  db: Db,
  addresses: readonly string[],
): Promise<{ added: string[]; removed: string[] }> {
  const wanted = [...new Set(addresses)].sort();
  const current = await db.select({ address: historyHolders.address }).from(historyHolders);
  const have = new Set(current.map((r) => r.address));
  if (wanted.length === have.size && wanted.every((a) => have.has(a))) return { added: [], removed: [] };
  return db.transaction(async (tx) => {
    await tx.execute(sql`lock table ${tokenTransfers} in share mode`);
    await tx.execute(sql`lock table ${historyHolders} in exclusive mode`);
    const locked = await tx.select({ address: historyHolders.address }).from(historyHolders);
    const present = new Set(locked.map((r) => r.address));
    const removed = [...present].filter((a) => !wanted.includes(a)).sort();
    const added = wanted.filter((a) => !present.has(a));
    const h = historyHolderHours;
    const tt = tokenTransfers;
    if (removed.length > 0) {
      const list = sql.param(removed);
      await tx.execute(sql`delete from ${historyHolders} where address = any(${list}::text[])`);
      await tx.execute(sql`delete from ${h} where ${h.holder} = any(${list}::text[])`);
    }
    if (added.length > 0) {
      const list = sql.param(added);
      await tx.execute(sql`insert into ${historyHolders} (address) select unnest(${list}::text[])`);
      await tx.execute(sql`
        insert into ${h} (holder, token_address, hour, delta)
          select holder, token_address, hour, sum(d) from (
            select ${tt.toAddress} as holder, ${tt.tokenAddress} as token_address,
              date_trunc('hour', ${tt.blockTimestamp}, 'UTC') as hour, ${tt.amount} as d
            from ${tt} where ${tt.toAddress} = any(${list}::text[])
            union all
            select ${tt.fromAddress}, ${tt.tokenAddress}, date_trunc('hour', ${tt.blockTimestamp}, 'UTC'), -${tt.amount}
            from ${tt} where ${tt.fromAddress} = any(${list}::text[])
          ) x group by 1, 2, 3 order by 1, 2, 3`);
    }
    return { added, removed };
  });
}
