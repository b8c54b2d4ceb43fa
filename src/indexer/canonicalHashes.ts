import type { ChainClient } from "../chain/createChainClient.ts";

/**
 * The chain's hash of each of `numbers` now, lowercase (undefined for a block without one, i.e. pending): the
 * headers are requested together, so the chain client sends them as one JSON-RPC batch. What the reorg checks
 * compare stored hashes with (`findCommonAncestor`, and `commitGroup` in indexRange.ts).
 */
export async function canonicalHashes(
  chain: ChainClient,
  numbers: readonly number[],
): Promise<Map<number, string | undefined>> {
  const headers = await Promise.all(numbers.map((n) => chain.client.getBlock({ blockNumber: BigInt(n) })));
  return new Map(numbers.map((n, i) => [n, headers[i]!.hash?.toLowerCase()]));
}
