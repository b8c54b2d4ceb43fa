import { describe, expect, test } from "vitest";
import { RangeTooLargeError } from "./errors.ts";
import { createLogRangeController, FIRST_RANGE_BLOCKS, LOGS_PER_RANGE } from "./logRange.ts";

const refused = (options: ConstructorParameters<typeof RangeTooLargeError>[1] = {}) =>
  new RangeTooLargeError("eth_getLogs block range too large", options);

describe("createLogRangeController", () => {
  test("default: the first range is FIRST_RANGE_BLOCKS; while the logs are few, each range doubles", () => {
    const ranges = createLogRangeController({ maxChunk: 5000 });
    expect(ranges.nextRange(0n, 12_000n)).toEqual({ fromBlock: 0n, toBlock: BigInt(FIRST_RANGE_BLOCKS - 1) });
    expect(ranges.rangeAfterSuccess(100n, 12_000n)).toEqual({ fromBlock: 100n, toBlock: 199n });
    ranges.onLogs(12, { fromBlock: 0n, toBlock: 99n });
    expect(ranges.rangeAfterSuccess(100n, 12_000n)).toEqual({ fromBlock: 100n, toBlock: 299n });
    ranges.onSuccess();
    const spans: bigint[] = [];
    let from = 100n;
    for (let i = 0; i < 7; i++) {
      const next = ranges.nextRange(from, 100_000n);
      spans.push(next.toBlock - next.fromBlock + 1n);
      ranges.onLogs(0, next);
      ranges.onSuccess();
      from = next.toBlock + 1n;
    }
    expect(spans).toEqual([200n, 400n, 800n, 1600n, 3200n, 5000n, 5000n]);
    // A small maxChunk is never exceeded, the first range included.
    expect(createLogRangeController({ maxChunk: 10 }).nextRange(0n, 100n)).toEqual({
      fromBlock: 0n,
      toBlock: 9n,
    });
  });

  test("behavior: a dense range sizes the next to about LOGS_PER_RANGE logs, down to one block", () => {
    const ranges = createLogRangeController({ maxChunk: 5000 });
    // 2,250 logs in 100 blocks: 222 blocks would hold 4,995, but a range is at most twice the one before.
    ranges.onLogs(2250, { fromBlock: 1n, toBlock: 100n });
    expect(ranges.rangeAfterSuccess(101n, 20_000n)).toEqual({ fromBlock: 101n, toBlock: 300n });
    ranges.onSuccess();
    expect(ranges.nextRange(101n, 20_000n)).toEqual({ fromBlock: 101n, toBlock: 300n });
    // 4,500 in those 200: 222 blocks.
    ranges.onLogs(4500, { fromBlock: 101n, toBlock: 300n });
    expect(ranges.nextRange(301n, 20_000n)).toEqual({ fromBlock: 301n, toBlock: 522n });
    // A burst: 48,000 logs in those 222 blocks.
    ranges.onLogs(48_000, { fromBlock: 301n, toBlock: 522n });
    expect(ranges.nextRange(523n, 20_000n)).toEqual({ fromBlock: 523n, toBlock: 523n + 23n - 1n });
    // One block alone above the budget: one block at a time, never none.
    ranges.onLogs(3 * LOGS_PER_RANGE, { fromBlock: 600n, toBlock: 600n });
    expect(ranges.nextRange(601n, 20_000n)).toEqual({ fromBlock: 601n, toBlock: 601n });
    // Quieter: FIRST_RANGE_BLOCKS after a short range (a live poll of one block does not make the next
    // catch-up crawl), then up to the density's 1,666 blocks for 3 logs a block.
    ranges.onLogs(0, { fromBlock: 601n, toBlock: 601n });
    expect(ranges.nextRange(602n, 20_000n)).toEqual({ fromBlock: 602n, toBlock: 701n });
    ranges.onLogs(6000, { fromBlock: 1000n, toBlock: 2999n });
    expect(ranges.nextRange(3000n, 20_000n)).toEqual({ fromBlock: 3000n, toBlock: 3000n + 1666n - 1n });
  });

  test("behavior: the density cap and a provider's refusal both apply, the smaller wins", () => {
    const ranges = createLogRangeController({ maxChunk: 5000, maxLogs: 1000, firstChunk: 5000 });
    ranges.onLogs(10, { fromBlock: 1n, toBlock: 5000n });
    ranges.onRangeError(refused({ maxBlockRange: 2000 }), { fromBlock: 101n, toBlock: 5100n });
    expect(ranges.nextRange(101n, 20_000n)).toEqual({ fromBlock: 101n, toBlock: 2100n });
    ranges.onLogs(1000, { fromBlock: 101n, toBlock: 2100n });
    expect(ranges.nextRange(2101n, 20_000n)).toEqual({ fromBlock: 2101n, toBlock: 4100n });
    ranges.onLogs(2000, { fromBlock: 2101n, toBlock: 4100n });
    expect(ranges.nextRange(4101n, 20_000n)).toEqual({ fromBlock: 4101n, toBlock: 5100n });
  });

  test("default: chunks of maxChunk, clipped to the end", () => {
    const ranges = createLogRangeController({ maxChunk: 5000, firstChunk: 5000 });
    expect(ranges.nextRange(0n, 12_000n)).toEqual({ fromBlock: 0n, toBlock: 4999n });
    expect(ranges.nextRange(10_000n, 12_000n)).toEqual({ fromBlock: 10_000n, toBlock: 12_000n });
    expect(ranges.nextRange(7n, 7n)).toEqual({ fromBlock: 7n, toBlock: 7n });
  });

  test("behavior: halves without a hint", () => {
    const ranges = createLogRangeController({ maxChunk: 5000, firstChunk: 5000 });
    ranges.onRangeError(refused(), { fromBlock: 100n, toBlock: 5099n });
    expect(ranges.chunkSize()).toBe(2500);
    expect(ranges.nextRange(100n, 10_000n)).toEqual({ fromBlock: 100n, toBlock: 2599n });
  });

  test("behavior: shrinks to the suggested range", () => {
    const ranges = createLogRangeController({ maxChunk: 5000, firstChunk: 5000 });
    // Infura: "query returned more than 10000 results. Try with this block range [0x1, 0x2f]."
    ranges.onRangeError(refused({ suggested: { fromBlock: 1n, toBlock: 0x2fn } }), {
      fromBlock: 1n,
      toBlock: 5000n,
    });
    expect(ranges.chunkSize()).toBe(47);
    expect(ranges.nextRange(1n, 5000n)).toEqual({ fromBlock: 1n, toBlock: 0x2fn });
  });

  test("behavior: shrinks to the provider's stated maximum", () => {
    const ranges = createLogRangeController({ maxChunk: 50_000, firstChunk: 50_000 });
    ranges.onRangeError(refused({ maxBlockRange: 10_000 }), { fromBlock: 0n, toBlock: 49_999n });
    expect(ranges.chunkSize()).toBe(10_000);
  });

  test("behavior: a suggestion no smaller than the attempt halves instead", () => {
    const ranges = createLogRangeController({ maxChunk: 1000, firstChunk: 1000 });
    ranges.onRangeError(refused({ suggested: { fromBlock: 0n, toBlock: 5000n } }), {
      fromBlock: 0n,
      toBlock: 999n,
    });
    expect(ranges.chunkSize()).toBe(500);
  });

  test("behavior: never below one block", () => {
    const ranges = createLogRangeController({ maxChunk: 4, firstChunk: 4 });
    for (let i = 0; i < 5; i++) {
      const range = ranges.nextRange(10n, 100n);
      ranges.onRangeError(refused(), range);
    }
    expect(ranges.chunkSize()).toBe(1);
    expect(ranges.nextRange(10n, 100n)).toEqual({ fromBlock: 10n, toBlock: 10n });
  });

  test("behavior: grows back to maxChunk after successes", () => {
    const ranges = createLogRangeController({ maxChunk: 5000, firstChunk: 5000 });
    ranges.onRangeError(refused({ suggested: { fromBlock: 0n, toBlock: 9n } }), {
      fromBlock: 0n,
      toBlock: 4999n,
    });
    expect(ranges.chunkSize()).toBe(10);
    const sizes: number[] = [];
    for (let i = 0; i < 12; i++) {
      ranges.onSuccess();
      sizes.push(ranges.chunkSize());
    }
    expect(sizes.slice(0, 4)).toEqual([20, 40, 80, 160]);
    expect(sizes.at(-1)).toBe(5000);
    expect(ranges.nextRange(0n, 100_000n)).toEqual({ fromBlock: 0n, toBlock: 4999n });
  });

  test("behavior: rangeAfterSuccess is what nextRange returns once the range in flight worked", () => {
    const ranges = createLogRangeController({ maxChunk: 5000, firstChunk: 5000 });
    ranges.onRangeError(refused({ maxBlockRange: 1000 }), { fromBlock: 1n, toBlock: 5000n });
    expect(ranges.nextRange(1n, 20_000n)).toEqual({ fromBlock: 1n, toBlock: 1000n });
    const ahead = ranges.rangeAfterSuccess(1001n, 20_000n);
    expect(ahead).toEqual({ fromBlock: 1001n, toBlock: 3000n });
    expect(ranges.chunkSize()).toBe(1000); // asking changes nothing
    ranges.onSuccess();
    expect(ranges.nextRange(1001n, 20_000n)).toEqual(ahead);
    // At maxChunk it stays there, clipped to the end.
    ranges.onSuccess();
    ranges.onSuccess();
    expect(ranges.rangeAfterSuccess(9_001n, 12_000n)).toEqual({ fromBlock: 9_001n, toBlock: 12_000n });
    expect(ranges.rangeAfterSuccess(1n, 20_000n)).toEqual({ fromBlock: 1n, toBlock: 5000n });
  });

  test("error: empty range", () => {
    const ranges = createLogRangeController({ maxChunk: 10, firstChunk: 10 });
    expect(() => ranges.nextRange(5n, 4n)).toThrow("empty block range: 5 > 4");
  });

  test("error: maxChunk, maxLogs and firstChunk must be positive integers", () => {
    expect(() => createLogRangeController({ maxChunk: 0 })).toThrow("maxChunk must be a positive integer");
    expect(() => createLogRangeController({ maxChunk: 10, maxLogs: 0 })).toThrow(
      "maxLogs must be a positive integer, got 0",
    );
    expect(() => createLogRangeController({ maxChunk: 10, firstChunk: 1.5 })).toThrow(
      "firstChunk must be a positive integer, got 1.5",
    );
  });
});
