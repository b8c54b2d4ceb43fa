import { classifyRpcError } from "../chain/classifyRpcError.ts";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { Address, Config } from "../config/schema.ts";
import { errorMessage, NonRetryableError, RetryableError } from "../internal/errors.ts";
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
        const code = await chain.client
          .getCode({ address: token.address as Address, blockNumber: BigInt(start - 1) })
          .catch((error: unknown) => {
            throw withStateHint(error, token.address, start);
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

/**
 * A refused historical `eth_getCode` is, in practice, a node without that block's state (a full node keeps
 * about the last 128 blocks; "missing trie node", "block height is … but requested was …"): say what protoscan
 * needs instead of only what the node answered. Retryable errors (the node down, throttling) pass unchanged.
 */
function withStateHint(error: unknown, token: string, startBlock: number): unknown {
  const classified = classifyRpcError(error);
  if (classified instanceof RetryableError) return error;
  return new NonRetryableError(
    `could not read the code of token ${token} at block ${startBlock - 1} (indexer.startBlock - 1), which ` +
      "decides how its balances are kept: " +
      `${errorMessage(classified)}. Backfilling from block ${startBlock} needs a node that keeps the state of ` +
      "old blocks (an archive node, as Alchemy, Infura and QuickNode serve by default).",
    { cause: error },
  );
}
