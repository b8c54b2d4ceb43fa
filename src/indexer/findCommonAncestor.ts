import type { ChainClient } from "../chain/createChainClient.ts";
import type { Db } from "../store/createDatabase.ts";
import { getStoredBlocksDesc } from "../store/indexerState.ts";
import { ChainMismatchError } from "./errors.ts";

const WINDOW = 1000;
const BATCH = 20;

/**
 * The deepest reorg protoscan follows, in blocks below the indexed block: more than any chain's finality
 * depth (Ethereum finalizes after 64 blocks; Polygon, Arbitrum and OP chains are counted around 200-240). A
 * stored block this deep that the chain does not have means the database belongs to another chain.
 */
export const REORG_WINDOW_BLOCKS = 256;

/**
 * Walk back through stored block headers at or below `from` (at most the chain's head) and return the newest
 * block whose stored hash the chain still has: the common ancestor. Everything after it is orphaned. When no
 * stored header matches, `floor` (or the block before the oldest one checked) is returned.
 *
 * @throws {ChainMismatchError} when a stored header more than `REORG_WINDOW_BLOCKS` below `cursor` (the
 *   indexed block) is not on the chain either: no reorg is that deep, the database was filled from another
 *   chain. The walk stops there, so it reads at most the headers stored within the window, plus one.
 */
export async function findCommonAncestor(
  chain: ChainClient,
  db: Db,
  at: { from: number; cursor: number; floor: number },
): Promise<number> {
  const deepest = at.cursor - REORG_WINDOW_BLOCKS + 1;
  const stored = await getStoredBlocksDesc(db, at.from, WINDOW);
  const below = stored.findIndex((b) => b.number < deepest);
  const candidates = below === -1 ? stored : stored.slice(0, below + 1);
  for (let i = 0; i < candidates.length; i += BATCH) {
    const part = candidates.slice(i, i + BATCH);
    const canonical = await Promise.all(
      part.map((b) => chain.client.getBlock({ blockNumber: BigInt(b.number) })),
    );
    for (let j = 0; j < part.length; j++) {
      const block = part[j]!;
      const hash = canonical[j]!.hash?.toLowerCase();
      if (hash === block.hash) return block.number;
      if (block.number < deepest) {
        throw new ChainMismatchError(
          `the chain has another block ${block.number} (${hash}) than the stored one (${block.hash}), ` +
            `${at.cursor - block.number} blocks below the indexed block ${at.cursor}: deeper than any reorg ` +
            `(${REORG_WINDOW_BLOCKS} blocks)`,
        );
      }
    }
  }
  const oldest = stored.at(-1);
  return oldest ? Math.max(at.floor, oldest.number - 1) : at.floor;
}
