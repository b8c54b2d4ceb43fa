import { inArray, sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { insertRows } from "./insertRows.ts";
import { prices } from "./schema.ts";

/**
 * The `prices` table (SPEC §2 "Prices with their tier and timestamp"): the price engine's shared cache. Every
 * process reads it before asking an upstream, so replicas and the indexer's refresh share one lookup.
 */

export type PriceRow = {
  /** lowercase */
  tokenAddress: string;
  priceUsd: number;
  /** api | dex | static */
  source: string;
  /** when the price was true */
  priceAt: Date;
  /** when it was looked up: the cache age */
  fetchedAt: Date;
};

/** The stored prices of these tokens (lowercase addresses), by primary key; tokens without one are absent. */
export async function getStoredPrices(db: Db, tokens: readonly string[]): Promise<PriceRow[]> {
  if (tokens.length === 0) return [];
  return db
    .select({
      tokenAddress: prices.tokenAddress,
      priceUsd: prices.priceUsd,
      source: prices.source,
      priceAt: prices.priceAt,
      fetchedAt: prices.fetchedAt,
    })
    .from(prices)
    .where(
      inArray(
        prices.tokenAddress,
        tokens.map((t) => t.toLowerCase()),
      ),
    );
}

/**
 * Store prices, replacing each token's previous one, in one statement. A row never replaces a more recently
 * fetched one (two processes refreshing at once keep the later lookup).
 */
export async function upsertPrices(db: Db, rows: readonly PriceRow[]): Promise<void> {
  await insertRows(
    db,
    prices,
    rows.map((r) => ({ ...r, tokenAddress: r.tokenAddress.toLowerCase() })),
    {
      onConflict: sql`on conflict (token_address) do update set price_usd = excluded.price_usd,
        source = excluded.source, price_at = excluded.price_at, fetched_at = excluded.fetched_at
        where ${prices.fetchedAt} <= excluded.fetched_at`,
    },
  );
}
