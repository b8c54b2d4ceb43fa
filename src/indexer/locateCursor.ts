import type { ChainClient } from "../chain/createChainClient.ts";
import type { Db } from "../store/createDatabase.ts";
import { getStoredBlock } from "../store/indexerState.ts";
import { ChainMismatchError } from "./errors.ts";
import { findCommonAncestor, REORG_WINDOW_BLOCKS } from "./findCommonAncestor.ts";

/**
 * Check the indexed block against the chain before indexing on from it: the cursor itself when the chain
 * still has the stored header there, else the common ancestor to roll back to (a reorg, including one that
 * left the chain shorter than the cursor).
 *
 * @throws {ChainMismatchError} when the cursor is more than `REORG_WINDOW_BLOCKS` beyond the chain's head, or
 *   the stored headers differ from the chain deeper than that: the database was indexed from another chain.
 */
export async function locateCursor(
  chain: ChainClient,
  db: Db,
  at: { cursor: number; head: number; floor: number },
): Promise<number> {
  const { cursor, head, floor } = at;
  if (cursor <= floor) return cursor; // nothing indexed yet
  if (cursor > head) {
    if (cursor - head > REORG_WINDOW_BLOCKS) {
      throw new ChainMismatchError(
        `it was indexed up to block ${cursor}, but the chain's head is block ${head}`,
      );
    }
    // A reorg onto a shorter chain: the stored blocks above the head are orphaned.
    return findCommonAncestor(chain, db, { from: head, cursor, floor });
  }
  const stored = await getStoredBlock(db, cursor);
  if (!stored) return cursor;
  const canonical = await chain.client.getBlock({ blockNumber: BigInt(cursor) });
  if (canonical.hash?.toLowerCase() === stored.hash) return cursor;
  return findCommonAncestor(chain, db, { from: cursor, cursor, floor });
}
