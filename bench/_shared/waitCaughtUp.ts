import { NonRetryableError } from "../../src/internal/errors.ts";
import { type BenchChain, sleep } from "./benchChain.ts";

/**
 * Wait until protoscan has indexed up to the node's head, less one block (`GET /api/stats`
 * `indexer.indexedBlock`): a live chain keeps mining while we look. Throws after `timeoutMs` (default 120 s).
 */
export async function waitCaughtUp(apiUrl: string, chain: BenchChain, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const response = await fetch(`${apiUrl}/api/stats`);
    const stats = (await response.json()) as { indexer?: { indexedBlock?: number | null } };
    const indexed = stats.indexer?.indexedBlock ?? -1;
    if (indexed >= (await chain.blockNumber()) - 1) return;
    await sleep(250);
  }
  throw new NonRetryableError(`protoscan did not catch up with the chain within ${timeoutMs / 1000} s`);
}
