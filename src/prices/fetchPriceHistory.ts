import { isRecord } from "../internal/isRecord.ts";
import type { ApiQuote } from "./apiQuote.ts";
import { PriceApiError } from "./errors.ts";
import { fetchJson } from "./fetchJson.ts";

/** One historical call: a token's hourly USD prices in `[start, end]` (both inclusive). */
export type PriceHistoryArgs = {
  baseUrl: string;
  /** lowercase */
  address: string;
  start: Date;
  end: Date;
  timeoutMs?: number;
  signal?: AbortSignal;
};

/**
 * Hourly USD prices of one token from the Alchemy Prices API,
 * `POST {baseUrl}/prices/v1/{apiKey}/tokens/historical` with
 * `{"network","address","startTime","endTime","interval":"1h"}`
 * (https://www.alchemy.com/docs/data/prices-api/prices-api-endpoints/prices-api-endpoints/get-historical-token-prices).
 * The answer is `{"network","address","currency":"usd","data":[{"value":"…","timestamp":"…"}]}`: values are
 * decimal strings, times ISO 8601. Points with an unreadable value or time are left out.
 *
 * @throws {PriceApiError} when the call fails or the body is not of that shape.
 */
export async function fetchAlchemyHistory(
  args: PriceHistoryArgs & { apiKey: string; network: string },
): Promise<ApiQuote[]> {
  const url = `${args.baseUrl.replace(/\/+$/, "")}/prices/v1/${encodeURIComponent(args.apiKey)}/tokens/historical`;
  const body = await fetchJson(url, {
    method: "POST",
    body: {
      network: args.network,
      address: args.address,
      startTime: args.start.toISOString(),
      endTime: args.end.toISOString(),
      interval: "1h",
    },
    secrets: [args.apiKey, encodeURIComponent(args.apiKey)],
    provider: "Alchemy",
    ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }),
    ...(args.signal === undefined ? {} : { signal: args.signal }),
  });
  if (!isRecord(body) || !Array.isArray(body.data)) {
    throw new PriceApiError("Alchemy price API answered without a `data` array");
  }
  return body.data.flatMap((point) => {
    if (!isRecord(point)) return [];
    const usd =
      typeof point.value === "string" || typeof point.value === "number" ? Number(point.value) : Number.NaN;
    const at = typeof point.timestamp === "string" ? new Date(point.timestamp) : new Date(Number.NaN);
    return Number.isFinite(usd) && !Number.isNaN(at.getTime()) ? [{ usd, at }] : [];
  });
}

/**
 * Hourly USD prices of one token from DefiLlama, `GET {baseUrl}/chart/{chain}:{address}?start&span&period=1h`
 * (https://defillama.com/docs/api, coins "chart"): `span` points from `start` (unix seconds). The answer is
 * `{"coins":{"chain:0x…":{"symbol","decimals","confidence","prices":[{"timestamp","price"}]}}}`; a coin
 * missing from it has no history; one whose `confidence` is below `minConfidence` is refused (no points).
 *
 * @throws {PriceApiError} when the call fails or the body is not of that shape.
 */
export async function fetchDefiLlamaChart(
  args: PriceHistoryArgs & { chain: string; minConfidence: number },
): Promise<ApiQuote[]> {
  const coin = `${args.chain}:${args.address}`;
  const start = Math.ceil(args.start.getTime() / 1000);
  const span = Math.floor((args.end.getTime() / 1000 - start) / 3600) + 1;
  const url = `${args.baseUrl.replace(/\/+$/, "")}/chart/${coin}?start=${start}&span=${span}&period=1h&searchWidth=600`;
  const body = await fetchJson(url, {
    method: "GET",
    secrets: [],
    provider: "DefiLlama",
    ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }),
    ...(args.signal === undefined ? {} : { signal: args.signal }),
  });
  if (!isRecord(body) || !isRecord(body.coins)) {
    throw new PriceApiError("DefiLlama price API answered without a `coins` object");
  }
  const entry = Object.entries(body.coins).find(([id]) => id.toLowerCase() === coin.toLowerCase())?.[1];
  if (!isRecord(entry) || !Array.isArray(entry.prices)) return [];
  if (typeof entry.confidence === "number" && entry.confidence < args.minConfidence) return [];
  return entry.prices.flatMap((point) => {
    if (!isRecord(point) || typeof point.price !== "number" || typeof point.timestamp !== "number") return [];
    return Number.isFinite(point.price) ? [{ usd: point.price, at: new Date(point.timestamp * 1000) }] : [];
  });
}
