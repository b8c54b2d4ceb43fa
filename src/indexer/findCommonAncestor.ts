import type { ChainClient } from "../chain/createChainClient.ts";
import type { Db } from "../store/createDatabase.ts";
import { getStoredBlocksDesc } from "../store/indexerState.ts";
import { canonicalHashes } from "./canonicalHashes.ts";
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
 * Walk back through stored block headers at or below `from` (at most the chain's head) and return the common
 * ancestor: the newest stored block the chain still has with no orphaned stored block below it. Everything
 * after it is rolled back. When no stored header qualifies, `floor` (or the block before the oldest orphan) is
 * returned.
 *
 * The walk does not stop at the first block the chain still has: webhooks and track-tx store blocks where
 * polling stored none, so a canonical block can sit above orphaned ones (the chain reorganized, a webhook
 * stored a block of the new chain, and polling has not noticed yet). Rolling back to it would keep the
 * orphans below for good. So every stored block of the reorg window is judged: by hash when it is the parent
 * of a block judged canonical just above it (no call), else against the chain, `BATCH` headers at a time.
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

  const onChain = new Map<number, string | undefined>();
  const chainHash = async (index: number): Promise<string | undefined> => {
    const number = candidates[index]!.number;
    if (!onChain.has(number)) {
      // This block and the next ones that cannot be judged by a parent hash: one batch of headers.
      const numbers = [number];
      for (let j = index + 1; j < candidates.length && numbers.length < BATCH; j++) {
        const n = candidates[j]!.number;
        if (n !== candidates[j - 1]!.number - 1 && !onChain.has(n)) numbers.push(n);
      }
      for (const [n, hash] of await canonicalHashes(chain, numbers)) onChain.set(n, hash);
    }
    return onChain.get(number);
  };

  // The newest canonical block with nothing orphaned found below it yet, and the oldest orphan found so far.
  let ancestor: number | undefined;
  let oldestOrphan: number | undefined;
  // The parent hash of the block just judged canonical: what the stored block one below must be.
  let parent: { number: number; hash: string } | undefined;
  for (let i = 0; i < candidates.length; i++) {
    const block = candidates[i]!;
    const expected = parent?.number === block.number ? parent.hash : await chainHash(i);
    const canonical = expected === block.hash;
    if (!canonical && block.number < deepest) {
      throw new ChainMismatchError(
        `the chain has another block ${block.number} (${expected}) than the stored one ` +
          `(${block.hash}), ${at.cursor - block.number} blocks below the indexed block ${at.cursor}: deeper ` +
          `than any reorg (${REORG_WINDOW_BLOCKS} blocks)`,
      );
    }
    if (canonical) {
      ancestor ??= block.number;
      parent = { number: block.number - 1, hash: block.parentHash };
    } else {
      ancestor = undefined;
      oldestOrphan = block.number;
      parent = undefined;
    }
  }
  if (ancestor !== undefined) return ancestor;
  return oldestOrphan !== undefined ? Math.max(at.floor, oldestOrphan - 1) : at.floor;
}
