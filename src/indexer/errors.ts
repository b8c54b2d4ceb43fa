import { NonRetryableError } from "../internal/errors.ts";

/**
 * The database was indexed from another chain than the one the RPC serves: the stored cursor is far beyond
 * the chain's head, or the chain has other blocks than the stored ones deeper than any reorg
 * (`REORG_WINDOW_BLOCKS`). Retrying cannot help, and rolling back would silently throw the data away: the
 * indexer stops and the process exits (docs/operations.md, "Database from another chain").
 */
export class ChainMismatchError extends NonRetryableError {
  override name = "ChainMismatchError";

  constructor(what: string) {
    super(
      `the database does not match the chain: ${what}. It was filled from another chain: a DATA_DIR or ` +
        "database reused with a new node (e.g. a restarted anvil), or RPC_URL / chain.id pointing at " +
        "another network. Start with a fresh DATA_DIR (or an empty database) for this chain, or point " +
        "RPC_URL at the chain the database was indexed from",
    );
  }
}
