/**
 * Chain identifiers the price APIs use, for the chains they cover, by EIP-155 chain id. Used when
 * `prices.api.network` is not configured.
 */

/** Alchemy network slugs (https://www.alchemy.com/docs/reference/prices-api-quickstart, `network`). */
const ALCHEMY_NETWORKS: Record<number, string> = {
  1: "eth-mainnet",
  10: "opt-mainnet",
  56: "bnb-mainnet",
  137: "polygon-mainnet",
  8453: "base-mainnet",
  42161: "arb-mainnet",
  43114: "avax-mainnet",
  59144: "linea-mainnet",
  534352: "scroll-mainnet",
  81457: "blast-mainnet",
  324: "zksync-mainnet",
  11155111: "eth-sepolia",
  84532: "base-sepolia",
};

/** DefiLlama chain prefixes of `coins.llama.fi` coin ids (`{chain}:{address}`). */
const DEFILLAMA_CHAINS: Record<number, string> = {
  1: "ethereum",
  10: "optimism",
  56: "bsc",
  100: "xdai",
  137: "polygon",
  250: "fantom",
  324: "era",
  8453: "base",
  42161: "arbitrum",
  43114: "avax",
  59144: "linea",
  534352: "scroll",
  81457: "blast",
};

/** The Alchemy network of a chain id, or undefined when unknown. */
export function alchemyNetworkOf(chainId: number): string | undefined {
  return ALCHEMY_NETWORKS[chainId];
}

/** The DefiLlama chain prefix of a chain id, or undefined when unknown. */
export function defiLlamaChainOf(chainId: number): string | undefined {
  return DEFILLAMA_CHAINS[chainId];
}
