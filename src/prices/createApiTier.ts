import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import type { ApiBatchResult } from "./apiQuote.ts";
import { alchemyNetworkOf, defiLlamaChainOf } from "./chainNames.ts";
import { ALCHEMY_MAX_ADDRESSES, fetchAlchemyPrices } from "./fetchAlchemyPrices.ts";
import { DEFILLAMA_MAX_COINS, fetchDefiLlamaPrices } from "./fetchDefiLlamaPrices.ts";
import { MAX_API_PRICE_AGE_MS, type Price } from "./price.ts";

export const DEFAULT_BASE_URLS = {
  alchemy: "https://api.g.alchemy.com",
  defillama: "https://coins.llama.fi",
} as const;

/** Tier 1 of the price engine (SPEC §6): the configured price API. */
export type ApiTier = {
  provider: "alchemy" | "defillama";
  /**
   * USD prices of the given tokens (lowercase addresses) that the API prices now: positive and at most an hour
   * old. Tokens are sent in as few calls as the provider allows (25 per Alchemy call, 100 per DefiLlama
   * call), in parallel. Never throws: a failing call is logged and its tokens are simply not priced.
   */
  lookup(tokens: readonly string[]): Promise<Map<string, Price>>;
};

export type ApiTierDeps = {
  now: () => Date;
  /** per call (default 5 s) */
  timeoutMs?: number;
};

/**
 * The api tier from `prices.api`, or null when none is configured or it cannot be used (Alchemy without an
 * API key, or no network known for the chain: logged once). The network is `prices.api.network`, else the
 * provider's name for `chain.id`; for DefiLlama, else `chain.name`.
 */
export function createApiTier(common: Common, deps: ApiTierDeps): ApiTier | null {
  const api = common.config.prices.api;
  if (!api) return null;
  const logger = common.logger.child({ module: "prices", tier: "api", provider: api.kind });
  const baseUrl = api.baseUrl ?? DEFAULT_BASE_URLS[api.kind];
  const chainId = common.config.chain.id;
  const options = {
    ...(deps.timeoutMs === undefined ? {} : { timeoutMs: deps.timeoutMs }),
    signal: common.shutdown.signal,
  };

  let call: (chunk: readonly string[]) => Promise<ApiBatchResult>;
  let chunkSize: number;
  if (api.kind === "alchemy") {
    const network = api.network ?? alchemyNetworkOf(chainId);
    const apiKey = api.apiKey;
    if (apiKey === undefined || apiKey === "" || network === undefined) {
      logger.warn(
        { hasApiKey: apiKey !== undefined && apiKey !== "", network: network ?? null },
        "Alchemy price API disabled: prices.api needs an apiKey and a network (prices.api.network)",
      );
      return null;
    }
    chunkSize = ALCHEMY_MAX_ADDRESSES;
    call = (addresses) => fetchAlchemyPrices({ baseUrl, apiKey, network, addresses, ...options });
  } else {
    const chain = api.network ?? defiLlamaChainOf(chainId) ?? common.config.chain.name;
    chunkSize = DEFILLAMA_MAX_COINS;
    call = (addresses) => fetchDefiLlamaPrices({ baseUrl, chain, addresses, ...options });
  }

  return {
    provider: api.kind,
    async lookup(tokens) {
      const prices = new Map<string, Price>();
      const unique = [...new Set(tokens.map((t) => t.toLowerCase()))];
      const chunks: string[][] = [];
      for (let i = 0; i < unique.length; i += chunkSize) chunks.push(unique.slice(i, i + chunkSize));
      await Promise.all(
        chunks.map(async (chunk) => {
          let result: ApiBatchResult;
          try {
            result = await call(chunk);
          } catch (error) {
            logger.warn({ tokens: chunk.length, error: errorMessage(error) }, "price API call failed");
            return;
          }
          const now = deps.now().getTime();
          for (const [token, reason] of result.errors) {
            logger.debug({ token, reason }, "price API has no price for the token");
          }
          for (const [token, quote] of result.quotes) {
            if (!(quote.usd > 0)) {
              logger.debug({ token, usd: quote.usd }, "price API price refused: not positive");
            } else if (now - quote.at.getTime() > MAX_API_PRICE_AGE_MS) {
              logger.debug(
                { token, at: quote.at.toISOString() },
                "price API price refused: older than 1 hour",
              );
            } else {
              prices.set(token, { usd: quote.usd, source: "api", at: quote.at });
            }
          }
        }),
      );
      return prices;
    },
  };
}
