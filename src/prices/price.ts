/** The tier a price came from (SPEC §6): the price API, the configured pool, or the configured value. */
export type PriceSource = "api" | "dex" | "static";

/** A USD price with its tier and the time it was true (SPEC §6: every price carries its tier and time). */
export type Price = { usd: number; source: PriceSource; at: Date };

export const PRICE_SOURCES: readonly PriceSource[] = ["api", "dex", "static"];

/** A price API quote older than this is refused (SPEC §6). */
export const MAX_API_PRICE_AGE_MS = 60 * 60 * 1000;
