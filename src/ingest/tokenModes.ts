import type { ChainClient } from "../chain/createChainClient.ts";
import type { Address, Config } from "../config/schema.ts";
import type { Db } from "../store/createDatabase.ts";
import { getTokenModes, setTokenModes, type TokenBalanceMode } from "../store/indexerState.ts";

/**
 * Decide, once per token, how its cached balances stay exact, and remember it:
 * - `delta`: the token is exclusive (every Transfer log is scanned) and its whole history is indexed (the
 *   scan starts at block 0, or the token had no code at `startBlock - 1`), so summing transfers is exact and
 *   costs no RPC call;
 * - `call`: otherwise, balances are read with `balanceOf` at the indexed block.
 * Returns the set of delta-mode token addresses.
 */
export async function resolveTokenModes(config: Config, chain: ChainClient, db: Db): Promise<Set<string>> {
  const known = new Map((await getTokenModes(db)).map((m) => [m.token, m]));
  const start = config.indexer.startBlock;
  const decided: TokenBalanceMode[] = [];
  for (const token of config.tokens) {
    if (known.has(token.address)) continue;
    let mode: "delta" | "call" = "call";
    if (token.exclusive) {
      if (start === 0) mode = "delta";
      else {
        const code = await chain.client.getCode({
          address: token.address as Address,
          blockNumber: BigInt(start - 1),
        });
        if (!code || code === "0x") mode = "delta";
      }
    }
    decided.push({ token: token.address, mode, fromBlock: start });
  }
  await setTokenModes(db, decided);
  for (const d of decided) known.set(d.token, d);
  return new Set([...known.values()].filter((m) => m.mode === "delta").map((m) => m.token));
}
