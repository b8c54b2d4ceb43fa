import { RetryableError } from "../internal/errors.ts";

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
