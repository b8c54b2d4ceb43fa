import { eq, min, sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { insertRows } from "./insertRows.ts";
import type { PricePointRow } from "./priceHistoryReads.ts";
import { priceBackfill, priceHistory, transactions } from "./schema.ts";

/** How far the api backfill of one token has come (prices/createPriceBackfill.ts). */
export type BackfillProgress = { coveredFrom: Date; coveredTo: Date };

/** The earliest stored transaction's block time: where the indexed time range starts (null before any). */
export async function getIndexedSince(db: Db): Promise<Date | null> {
  const [row] = await db.select({ since: min(transactions.blockTimestamp) }).from(transactions);
  return row?.since ? new Date(row.since) : null;
}

/** The backfill progress of every token with the provider, by lowercase address. */
export async function getBackfillProgress(db: Db, provider: string): Promise<Map<string, BackfillProgress>> {
  const rows = await db.select().from(priceBackfill).where(eq(priceBackfill.provider, provider));
  return new Map(rows.map((r) => [r.tokenAddress, { coveredFrom: r.coveredFrom, coveredTo: r.coveredTo }]));
}

/**
 * Store one backfill step in one database transaction: the points fetched and the token's new coverage.
 * A crash leaves either both or neither, so a restart fetches exactly what is not covered.
 */
export async function saveBackfillStep(
  db: Db,
  step: { token: string; provider: string; points: readonly PricePointRow[]; progress: BackfillProgress },
): Promise<void> {
  await db.transaction(async (tx) => {
    if (step.points.length > 0) {
      const unique = new Map(step.points.map((p) => [p.time.getTime(), p]));
      await insertRows(tx, priceHistory, [...unique.values()], {
        onConflict: sql`on conflict (token_address, source, time) do update set price_usd = excluded.price_usd,
          origin = excluded.origin, recorded_at = now()
          where ${priceHistory.priceUsd} is distinct from excluded.price_usd`,
      });
    }
    const values = {
      tokenAddress: step.token,
      provider: step.provider,
      coveredFrom: step.progress.coveredFrom,
      coveredTo: step.progress.coveredTo,
      updatedAt: new Date(),
    };
    await tx
      .insert(priceBackfill)
      .values(values)
      .onConflictDoUpdate({
        target: [priceBackfill.tokenAddress, priceBackfill.provider],
        set: { coveredFrom: values.coveredFrom, coveredTo: values.coveredTo, updatedAt: values.updatedAt },
      });
  });
}
