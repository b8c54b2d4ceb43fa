import type { TokenConfig } from "../config/schema.ts";
import type { Price } from "./price.ts";

/**
 * Tier 3 of the price engine (SPEC §6): the token's configured `price.usd`, dated `now`; null when the token
 * has none (or is not tracked).
 */
export function staticPrice(token: TokenConfig | undefined, now: Date): Price | null {
  const usd = token?.price?.usd;
  return usd === undefined ? null : { usd, source: "static", at: now };
}
