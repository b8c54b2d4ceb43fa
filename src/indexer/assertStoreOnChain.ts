import type { ChainClient } from "../chain/createChainClient.ts";
import type { Common } from "../internal/common.ts";
import type { Db } from "../store/createDatabase.ts";
import { CURSOR_NAME, getCursor } from "../store/indexerState.ts";
import { locateCursor } from "./locateCursor.ts";

/**
 * Start-up check (every role): the stored cursor and the block headers below it belong to the chain the RPC
 * serves. A shallow difference is a reorg the indexer rolls back on its first cycle; nothing is written here.
 *
 * @throws {ChainMismatchError} when the database was indexed from another chain (see `locateCursor`).
 */
export async function assertStoreOnChain(
  common: Common,
  deps: { chain: ChainClient; db: Db },
): Promise<void> {
  const cursor = await getCursor(deps.db, CURSOR_NAME);
  if (!cursor) return;
  const head = Number(await deps.chain.client.getBlockNumber({ cacheTime: 0 }));
  await locateCursor(deps.chain, deps.db, {
    cursor: cursor.blockNumber,
    head,
    floor: common.config.indexer.startBlock - 1,
  });
}
