import { erc20Abi } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { Address } from "../config/schema.ts";
import type { Logger } from "../internal/logger.ts";
import type { BalanceReading } from "../store/balanceWrites.ts";

/** Calldata bytes per multicall `eth_call`: about 300 `balanceOf` calls each. */
const MULTICALL_BATCH_BYTES = 32_768;

/**
 * Read `balanceOf(holder)` at `blockNumber` for every (token, holder) pair, deduplicated, through Multicall3
 * aggregate calls: one `eth_call` (26 CU) per few hundred balances instead of one per balance. The multicall
 * is deployless (its creation code rides in the `eth_call`), so it works at any block and on chains
 * without Multicall3, such as a fresh anvil. Used for tokens whose history is not fully indexed, where
 * delta arithmetic cannot be exact. A balance whose call fails (a token that reverts) is skipped and logged:
 * the cached value stays until a later reading succeeds.
 */
export async function readBalances(
  chain: ChainClient,
  pairs: readonly { token: string; holder: string }[],
  blockNumber: number,
  logger?: Logger,
): Promise<BalanceReading[]> {
  const unique = [...new Map(pairs.map((p) => [`${p.token}:${p.holder}`, p])).values()];
  if (unique.length === 0) return [];
  const results = await chain.client.multicall({
    contracts: unique.map((p) => ({
      address: p.token as Address,
      abi: erc20Abi,
      functionName: "balanceOf" as const,
      args: [p.holder as Address] as const,
    })),
    blockNumber: BigInt(blockNumber),
    allowFailure: true,
    batchSize: MULTICALL_BATCH_BYTES,
    deployless: true,
  });
  const readings: BalanceReading[] = [];
  results.forEach((result, i) => {
    const pair = unique[i]!;
    if (result.status === "success") {
      readings.push({
        token: pair.token as Address,
        holder: pair.holder as Address,
        balance: result.result,
        blockNumber,
      });
    } else {
      logger?.warn(
        { token: pair.token, holder: pair.holder, blockNumber },
        "balanceOf failed; cached balance kept",
      );
    }
  });
  return readings;
}
