import { erc20Abi, formatUnits, parseAbi, parseUnits } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { Address } from "../config/schema.ts";
import { NonRetryableError } from "../internal/errors.ts";

/** The pool configured for a token (`tokens[].price.pool` and `quote`, SPEC §1). */
export type PoolSpec = {
  token: Address;
  tokenDecimals: number;
  pool: Address;
  quote: Address;
  /** the quote token's decimals when known from the config; read from the chain otherwise */
  quoteDecimals?: number | undefined;
  /** whole quote tokens (decimal string); absent: no minimum */
  minQuoteLiquidity?: string | undefined;
};

/** A pool's reserves on the token's and on the quote's side, in raw units, with both decimals. */
export type PoolReading = {
  tokenReserve: bigint;
  quoteReserve: bigint;
  tokenDecimals: number;
  quoteDecimals: number;
  /** `minQuoteLiquidity` in raw quote units (0n when not configured) */
  minQuoteReserve: bigint;
};

/** The configured pool is not a pair of the token and its quote (a configuration mistake). */
export class PoolMismatchError extends NonRetryableError {
  override name = "PoolMismatchError";
}

const PAIR_ABI = parseAbi([
  "function getReserves() view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)",
  "function token0() view returns (address)",
  "function token1() view returns (address)",
]);

/**
 * Read a Uniswap-V2-style pair for the dex tier (SPEC §6): `getReserves`, `token0`, `token1` and the quote
 * token's `decimals`, in one Multicall3 `eth_call` at the latest block (deployless, so it works on chains
 * without Multicall3).
 *
 * @throws {PoolMismatchError} when the pair does not hold exactly the token and its quote.
 * @throws the chain client's errors when the call fails (not a pair, node down).
 */
export async function readPool(chain: ChainClient, spec: PoolSpec): Promise<PoolReading> {
  const [reserves, token0, token1, quoteDecimals] = await chain.client.multicall({
    contracts: [
      { address: spec.pool, abi: PAIR_ABI, functionName: "getReserves" },
      { address: spec.pool, abi: PAIR_ABI, functionName: "token0" },
      { address: spec.pool, abi: PAIR_ABI, functionName: "token1" },
      { address: spec.quote, abi: erc20Abi, functionName: "decimals" },
    ],
    allowFailure: false,
    deployless: true,
  });
  const [a, b] = [token0.toLowerCase(), token1.toLowerCase()];
  const token = spec.token.toLowerCase();
  const quote = spec.quote.toLowerCase();
  if (!((a === token && b === quote) || (a === quote && b === token))) {
    throw new PoolMismatchError(`pool ${spec.pool} is not a pair of ${spec.token} and ${spec.quote}`);
  }
  const decimals = spec.quoteDecimals ?? quoteDecimals;
  const [reserve0, reserve1] = reserves;
  return {
    tokenReserve: a === token ? reserve0 : reserve1,
    quoteReserve: a === token ? reserve1 : reserve0,
    tokenDecimals: spec.tokenDecimals,
    quoteDecimals: decimals,
    minQuoteReserve: spec.minQuoteLiquidity === undefined ? 0n : parseUnits(spec.minQuoteLiquidity, decimals),
  };
}

/** The dex tier's answer for a pool: a USD price, or why the pool was refused. */
export type PoolPrice = { usd: number } | { refused: string };

/**
 * The token's USD price from a pool reading (SPEC §6): quote reserve / token reserve, each scaled by its
 * decimals, times the quote token's USD price. Refused when the quote side holds less than
 * `minQuoteLiquidity` whole quote tokens, or when either side is empty.
 */
export function poolPrice(reading: PoolReading, quoteUsd: number): PoolPrice {
  if (reading.quoteReserve < reading.minQuoteReserve) {
    return {
      refused: `quote reserve ${formatUnits(reading.quoteReserve, reading.quoteDecimals)} below minQuoteLiquidity ${formatUnits(reading.minQuoteReserve, reading.quoteDecimals)}`,
    };
  }
  if (reading.tokenReserve === 0n || reading.quoteReserve === 0n) return { refused: "empty pool" };
  const quotePerToken =
    Number(formatUnits(reading.quoteReserve, reading.quoteDecimals)) /
    Number(formatUnits(reading.tokenReserve, reading.tokenDecimals));
  const usd = quotePerToken * quoteUsd;
  return Number.isFinite(usd) ? { usd } : { refused: "price out of range" };
}
