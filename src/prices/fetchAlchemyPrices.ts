import { isRecord } from "../internal/isRecord.ts";
import type { ApiBatchResult } from "./apiQuote.ts";
import { PriceApiError } from "./errors.ts";
import { fetchJson } from "./fetchJson.ts";

/** Addresses per `tokens/by-address` call: Alchemy's documented maximum. */
export const ALCHEMY_MAX_ADDRESSES = 25;

export type AlchemyPricesArgs = {
  /** e.g. https://api.g.alchemy.com */
  baseUrl: string;
  apiKey: string;
  /** e.g. eth-mainnet */
  network: string;
  /** at most 25 */
  addresses: readonly string[];
  timeoutMs?: number;
  signal?: AbortSignal;
};

/**
 * Current USD prices of up to 25 tokens from the Alchemy Prices API,
 * `POST {baseUrl}/prices/v1/{apiKey}/tokens/by-address` with `{"addresses":[{"network","address"}]}`
 * (https://www.alchemy.com/docs/data/prices-api/prices-api-endpoints/prices-api-endpoints/get-token-prices-by-address).
 *
 * The answer is `{"data":[{"network","address","prices":[{"currency","value","lastUpdatedAt"}],"error"}]}`:
 * an entry with an `error`, without a `usd` price, or with an unreadable value or time is reported in
 * `errors` and left out of `quotes`. Values are decimal strings (`"3000.00"`).
 *
 * @throws {PriceApiError} when the call fails as a whole or the body is not of that shape.
 */
export async function fetchAlchemyPrices(args: AlchemyPricesArgs): Promise<ApiBatchResult> {
  if (args.addresses.length > ALCHEMY_MAX_ADDRESSES) {
    throw new RangeError(`at most ${ALCHEMY_MAX_ADDRESSES} addresses per Alchemy call`);
  }
  const url = `${args.baseUrl.replace(/\/+$/, "")}/prices/v1/${encodeURIComponent(args.apiKey)}/tokens/by-address`;
  const body = await fetchJson(url, {
    method: "POST",
    body: { addresses: args.addresses.map((address) => ({ network: args.network, address })) },
    secrets: [args.apiKey, encodeURIComponent(args.apiKey)],
    provider: "Alchemy",
    ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }),
    ...(args.signal === undefined ? {} : { signal: args.signal }),
  });
  if (!isRecord(body) || !Array.isArray(body.data)) {
    throw new PriceApiError("Alchemy price API answered without a `data` array");
  }
  const result: ApiBatchResult = { quotes: new Map(), errors: new Map() };
  for (const entry of body.data) {
    if (!isRecord(entry) || typeof entry.address !== "string") continue;
    const address = entry.address.toLowerCase();
    if (entry.error !== undefined && entry.error !== null) {
      result.errors.set(address, typeof entry.error === "string" ? entry.error : JSON.stringify(entry.error));
      continue;
    }
    const usd = Array.isArray(entry.prices)
      ? entry.prices.find(
          (p) => isRecord(p) && typeof p.currency === "string" && p.currency.toLowerCase() === "usd",
        )
      : undefined;
    if (!isRecord(usd)) {
      result.errors.set(address, "no usd price");
      continue;
    }
    const value =
      typeof usd.value === "string" || typeof usd.value === "number" ? Number(usd.value) : Number.NaN;
    const at = typeof usd.lastUpdatedAt === "string" ? new Date(usd.lastUpdatedAt) : new Date(Number.NaN);
    if (!Number.isFinite(value) || Number.isNaN(at.getTime())) {
      result.errors.set(address, "unreadable price or time");
      continue;
    }
    result.quotes.set(address, { usd: value, at });
  }
  for (const address of args.addresses) {
    const key = address.toLowerCase();
    if (!result.quotes.has(key) && !result.errors.has(key)) result.errors.set(key, "not in the answer");
  }
  return result;
}
