import { RetryableError } from "../internal/errors.ts";
import { BlockHashConflictError, StoredBlocksUnverifiedError } from "../store/errors.ts";

/**
 * The chain changed under us between two calls (a log's block hash no longer matches its block, a
 * receipt belongs to another block). Nothing from that fetch is stored; fetching again resolves it.
 */
export class ReorgDetectedError extends RetryableError {
  override name = "ReorgDetectedError";
  readonly blockNumber: number;

  constructor(blockNumber: number, details: string) {
    super(`chain reorganized at block ${blockNumber} while fetching`, { details });
    this.blockNumber = blockNumber;
  }
}

/**
 * A polling commit's span holds blocks stored ahead of the cursor (by webhooks or track-tx) that it cannot
 * vouch for: nothing is stored. The indexer reads them from the chain, rolls back the orphaned ones and
 * commits again (indexer/indexRange.ts). Ingest's name for the store's `StoredBlocksUnverifiedError`.
 */
export class UnverifiedBlocksError extends RetryableError {
  override name = "UnverifiedBlocksError";
  readonly blocks: readonly { number: number; hash: string }[];

  constructor(cause: StoredBlocksUnverifiedError) {
    super(cause.shortMessage, { cause });
    this.blocks = cause.blocks;
  }
}

/**
 * The one place where ingest turns the store's refusal of a commit into its own errors, so its callers
 * (the indexer, webhooks, track-tx) catch ingest's errors only: a block stored under another hash is a
 * reorg (`ReorgDetectedError`: fetch again), a span holding unverified blocks is `UnverifiedBlocksError`.
 * Anything else passes unchanged.
 */
export function translateStoreError(error: unknown): unknown {
  if (error instanceof BlockHashConflictError)
    return new ReorgDetectedError(error.blockNumber, error.message);
  if (error instanceof StoredBlocksUnverifiedError) return new UnverifiedBlocksError(error);
  return error;
}
