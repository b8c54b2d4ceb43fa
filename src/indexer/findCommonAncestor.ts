import type { ChainClient } from "../chain/createChainClient.ts";
import type { Db } from "../store/createDatabase.ts";
import { getStoredBlocksDesc } from "../store/indexerState.ts";

const WINDOW = 1000;
const BATCH = 20;

/**
 * Walk back through stored block headers from `from` and return the newest block whose stored hash the
 * chain still has: the common ancestor. Everything after it is orphaned. When no stored header in the
 * window matches, the block before the oldest one checked is taken (deeper reorgs are beyond the
 * unfinalized window this indexer promises to handle), or `floor` when nothing is stored.
 */
export async function findCommonAncestor(
  chain: ChainClient,
  db: Db,
  from: number,
  floor: number,
): Promise<number> {
  const stored = await getStoredBlocksDesc(db, from, WINDOW);
  for (let i = 0; i < stored.length; i += BATCH) {
    const part = stored.slice(i, i + BATCH);
    const canonical = await Promise.all(
      part.map((b) => chain.client.getBlock({ blockNumber: BigInt(b.number) })),
    );
    for (let j = 0; j < part.length; j++) {
      if (canonical[j]!.hash?.toLowerCase() === part[j]!.hash) return part[j]!.number;
    }
  }
  const oldest = stored.at(-1);
  return oldest ? Math.max(floor, oldest.number - 1) : floor;
}
