import { NonRetryableError } from "../internal/errors.ts";
import type { RangeTooLargeError } from "./errors.ts";

export type BlockRange = { fromBlock: bigint; toBlock: bigint };

/**
 * Adaptive eth_getLogs chunking (SPEC §3.1): start at `maxChunk` blocks (`indexer.logChunkBlocks`),
 * shrink when the provider refuses a range, grow back after successes — never pinned small.
 */
export type LogRangeController = {
  /** The next range to request inside [from, to]: at most the current chunk size. */
  nextRange(from: bigint, to: bigint): BlockRange;
  /**
   * The range `nextRange` will return once the range in flight has worked (`onSuccess`): what the indexer
   * fetches ahead while that one is committed.
   */
  rangeAfterSuccess(from: bigint, to: bigint): BlockRange;
  /** The last range worked: double the chunk, up to `maxChunk`. */
  onSuccess(): void;
  /**
   * The provider refused `attempted`: shrink to the span it suggested (or to its stated maximum), else
   * halve the attempted span; never below 1 block.
   */
  onRangeError(error: RangeTooLargeError, attempted: BlockRange): void;
  /** The current chunk size in blocks. */
  chunkSize(): number;
};

/** [from, to] cut to at most `span` blocks. */
function rangeOf(from: bigint, to: bigint, span: bigint): BlockRange {
  if (from > to) throw new NonRetryableError(`empty block range: ${from} > ${to}`);
  const end = from + span - 1n;
  return { fromBlock: from, toBlock: end < to ? end : to };
}

function spanOf(range: BlockRange): bigint {
  return range.toBlock - range.fromBlock + 1n;
}

/** Create a controller; one per scan (the indexer keeps one for the life of the process). */
export function createLogRangeController(options: { maxChunk: number }): LogRangeController {
  if (!Number.isSafeInteger(options.maxChunk) || options.maxChunk < 1) {
    throw new NonRetryableError(`maxChunk must be a positive integer, got ${options.maxChunk}`);
  }
  const maxChunk = BigInt(options.maxChunk);
  let chunk = maxChunk;
  const grown = () => (chunk * 2n < maxChunk ? chunk * 2n : maxChunk);

  return {
    nextRange(from, to) {
      return rangeOf(from, to, chunk);
    },
    rangeAfterSuccess(from, to) {
      return rangeOf(from, to, grown());
    },
    onSuccess() {
      chunk = grown();
    },
    onRangeError(error, attempted) {
      const attemptedSpan = spanOf(attempted);
      let next = attemptedSpan / 2n;
      if (error.suggested && error.suggested.fromBlock <= error.suggested.toBlock) {
        const suggestedSpan = spanOf(error.suggested);
        if (suggestedSpan < attemptedSpan) next = suggestedSpan;
      } else if (error.maxBlockRange !== undefined) {
        const limit = BigInt(error.maxBlockRange);
        if (limit < attemptedSpan) next = limit;
      }
      if (next < 1n) next = 1n;
      if (next > maxChunk) next = maxChunk;
      chunk = next;
    },
    chunkSize: () => Number(chunk),
  };
}
