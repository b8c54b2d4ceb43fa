import { NonRetryableError } from "../internal/errors.ts";
import type { RangeTooLargeError } from "./errors.ts";

export type BlockRange = { fromBlock: bigint; toBlock: bigint };

/**
 * Adaptive eth_getLogs chunking (SPEC §3.1): ranges of at most `maxChunk` blocks (`indexer.logChunkBlocks`),
 * shrunk when the provider refuses a range, grown back after successes — never pinned small — and sized so
 * that a response holds about `maxLogs` logs: the density of the last response caps the next range, which is
 * also at most twice as long. The first range, whose density is unknown, is `firstChunk` blocks.
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
   * `attempted` returned `count` logs: the ranges after it hold about `maxLogs` logs at that density, and are
   * at most twice as long as it or `firstChunk` (at least one block, at most `maxChunk`). Called as soon as a
   * response is in, before the next range is chosen.
   */
  onLogs(count: number, attempted: BlockRange): void;
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

/**
 * The logs one eth_getLogs response should hold at most: the bound on what a backfill holds of a range at once,
 * half of Alchemy's cap on a response of any block range (10,000; other providers refuse more, or about as
 * many). Parsed, 10,000 logs are about 15 MB; a 5,000-block range of a busy protocol (48,000 logs in
 * `npm run bench:index` with `--count 20000`) raised the peak by 45 MB. 5,000 instead of 10,000 (with commit
 * groups of 500 transactions, src/indexer/indexRange.ts) took `npm start` on that chain from 234-239 to
 * 214-218 MB, for 0.2-0.4 s more (docs/performance.md, "First start").
 */
export const LOGS_PER_RANGE = 5_000;
/**
 * The first range's blocks, before any response told the density: 100 blocks of 50 logs each still fit
 * LOGS_PER_RANGE. On a sparse chain the ranges double from there to `maxChunk` (100, 200, … 5,000: six calls
 * more, once per start).
 */
export const FIRST_RANGE_BLOCKS = 100;

/** Create a controller; one per scan (the indexer keeps one for the life of the process). */
export function createLogRangeController(options: {
  maxChunk: number;
  /** default LOGS_PER_RANGE */
  maxLogs?: number;
  /** default FIRST_RANGE_BLOCKS (never more than `maxChunk`) */
  firstChunk?: number;
}): LogRangeController {
  for (const [name, value] of Object.entries(options)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new NonRetryableError(`${name} must be a positive integer, got ${value}`);
    }
  }
  const maxChunk = BigInt(options.maxChunk);
  const maxLogs = BigInt(options.maxLogs ?? LOGS_PER_RANGE);
  let chunk = maxChunk;
  const firstChunk = BigInt(Math.min(options.firstChunk ?? FIRST_RANGE_BLOCKS, options.maxChunk));
  /** the blocks the last response's density allows (`firstChunk` before any response) */
  let dense = firstChunk;
  const grown = () => (chunk * 2n < maxChunk ? chunk * 2n : maxChunk);
  const capped = (span: bigint) => (span < dense ? span : dense);

  return {
    nextRange(from, to) {
      return rangeOf(from, to, capped(chunk));
    },
    rangeAfterSuccess(from, to) {
      return rangeOf(from, to, capped(grown()));
    },
    onSuccess() {
      chunk = grown();
    },
    onLogs(count, attempted) {
      // At most twice the blocks of the range just read (or `firstChunk`): its density says nothing of the
      // blocks after it (a protocol's activity grows), so the budget is approached in steps rather than
      // overshot at once; a live poll of a block or two does not make the next catch-up crawl.
      const attemptedSpan = spanOf(attempted);
      let span = count > 0 ? (attemptedSpan * maxLogs) / BigInt(count) : maxChunk;
      const step = 2n * attemptedSpan > firstChunk ? 2n * attemptedSpan : firstChunk;
      if (span > step) span = step;
      dense = span < 1n ? 1n : span > maxChunk ? maxChunk : span;
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
