import { isRecord } from "../internal/isRecord.ts";
import type { ApiBatchResult } from "./apiQuote.ts";
import { PriceApiError } from "./errors.ts";
import { fetchJson } from "./fetchJson.ts";

/** Coins per `prices/current` call: keeps the URL around 5 KB. */
export const DEFILLAMA_MAX_COINS = 100;

/** DefiLlama's own reliability score; prices below it are not trusted (SPEC §6 via issue 6). */
export const MIN_CONFIDENCE = 0.9;

export type DefiLlamaPricesArgs = {
  /** e.g. https://coins.llama.fi */
  baseUrl: string;
  /** DefiLlama's chain prefix, e.g. ethereum */
  chain: string;
  /** at most 100 */
  addresses: readonly string[];
  timeoutMs?: number;
  signal?: AbortSignal;
};

/**
 * Current USD prices from DefiLlama, `GET {baseUrl}/prices/current/{chain}:{address},…`
 * (https://defillama.com/docs/api, coins). The answer is
 * `{"coins":{"chain:0x…":{"price","decimals","symbol","timestamp","confidence"}}}` (timestamp in Unix
 * seconds); a coin missing from it, with a `confidence` below 0.9, or with an unreadable price or time is
 * reported in `errors`. Keys are matched case-insensitively (DefiLlama echoes the id as asked, but not always).
 *
 * @throws {PriceApiError} when the call fails as a whole or the body is not of that shape.
 */
export async function fetchDefiLlamaPrices(args: DefiLlamaPricesArgs): Promise<ApiBatchResult> {
  if (args.addresses.length > DEFILLAMA_MAX_COINS) {
    throw new RangeError(`at most ${DEFILLAMA_MAX_COINS} coins per DefiLlama call`);
  }
  const coins = args.addresses.map((address) => `${args.chain}:${address}`).join(",");
  const body = await fetchJson(`${args.baseUrl.replace(/\/+$/, "")}/prices/current/${coins}`, {
    method: "GET",
    secrets: [],
    provider: "DefiLlama",
    ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }),
    ...(args.signal === undefined ? {} : { signal: args.signal }),
  });
  if (!isRecord(body) || !isRecord(body.coins)) {
    throw new PriceApiError("DefiLlama price API answered without a `coins` object");
  }
  const byId = new Map(Object.entries(body.coins).map(([id, coin]) => [id.toLowerCase(), coin]));
  const result: ApiBatchResult = { quotes: new Map(), errors: new Map() };
  for (const address of args.addresses) {
    const key = address.toLowerCase();
    const coin = byId.get(`${args.chain}:${key}`.toLowerCase());
    if (!isRecord(coin)) {
      result.errors.set(key, "not in the answer");
      continue;
    }
    if (typeof coin.confidence === "number" && coin.confidence < MIN_CONFIDENCE) {
      result.errors.set(key, `confidence ${coin.confidence} below ${MIN_CONFIDENCE}`);
      continue;
    }
    const usd = typeof coin.price === "number" ? coin.price : Number.NaN;
    const seconds = typeof coin.timestamp === "number" ? coin.timestamp : Number.NaN;
    if (!Number.isFinite(usd) || !Number.isFinite(seconds)) {
      result.errors.set(key, "unreadable price or time");
      continue;
    }
    result.quotes.set(key, { usd, at: new Date(seconds * 1000) });
  }
  return result;
}
