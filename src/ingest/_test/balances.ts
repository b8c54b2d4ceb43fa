import type { ChainClient } from "../../chain/createChainClient.ts";
import type { Config } from "../../config/schema.ts";
import { touchBalances, upsertReadings } from "../../store/balanceWrites.ts";
import type { Db } from "../../store/createDatabase.ts";
import { getStaleHolders } from "../../store/indexerState.ts";
import { readBalances } from "../readBalances.ts";
import { resolveTokenModes } from "../tokenModes.ts";

/**
 * The token addresses whose balances ingest keeps by delta arithmetic: the modes `createIngest` decided and
 * stored for `db` (resolved again, which reads them back).
 */
export function deltaTokensOf(config: Config, chain: ChainClient, db: Db): Promise<Set<string>> {
  return resolveTokenModes(config, chain, db);
}

/**
 * Read again, at `blockNumber`, every cached balance of the tokens kept in `call` mode that is older than it:
 * such tokens are not scanned in full, so their holders' balances also move in transactions protoscan never
 * stores. Tests call it to compare the store with the chain at a block the indexer did not end a range at.
 * A holder whose call failed is stamped with this block anyway, so the loop moves on. Returns how many were
 * read.
 */
export async function refreshCallBalances(
  config: Config,
  chain: ChainClient,
  db: Db,
  blockNumber: number,
): Promise<number> {
  const deltaTokens = await deltaTokensOf(config, chain, db);
  const callTokens = config.tokens.map((t) => t.address as string).filter((t) => !deltaTokens.has(t));
  let read = 0;
  for (;;) {
    const stale = await getStaleHolders(db, callTokens, blockNumber, 2_000);
    if (stale.length === 0) return read;
    const readings = await readBalances(chain, stale, blockNumber);
    const failed = stale.filter((p) => !readings.some((r) => r.token === p.token && r.holder === p.holder));
    await upsertReadings(db, readings);
    if (failed.length > 0) await touchBalances(db, failed, blockNumber);
    read += readings.length;
  }
}
