import { describe, expect, test } from "vitest";
import { RangeTooLargeError } from "./errors.ts";
import { createLogRangeController } from "./logRange.ts";

const refused = (options: ConstructorParameters<typeof RangeTooLargeError>[1] = {}) =>
  new RangeTooLargeError("eth_getLogs block range too large", options);

describe("createLogRangeController", () => {
  test("default: chunks of maxChunk, clipped to the end", () => {
    const ranges = createLogRangeController({ maxChunk: 5000 });
    expect(ranges.nextRange(0n, 12_000n)).toEqual({ fromBlock: 0n, toBlock: 4999n });
    expect(ranges.nextRange(10_000n, 12_000n)).toEqual({ fromBlock: 10_000n, toBlock: 12_000n });
    expect(ranges.nextRange(7n, 7n)).toEqual({ fromBlock: 7n, toBlock: 7n });
  });

  test("behavior: halves without a hint", () => {
    const ranges = createLogRangeController({ maxChunk: 5000 });
    ranges.onRangeError(refused(), { fromBlock: 100n, toBlock: 5099n });
    expect(ranges.chunkSize()).toBe(2500);
    expect(ranges.nextRange(100n, 10_000n)).toEqual({ fromBlock: 100n, toBlock: 2599n });
  });

  test("behavior: shrinks to the suggested range", () => {
    const ranges = createLogRangeController({ maxChunk: 5000 });
    // Infura: "query returned more than 10000 results. Try with this block range [0x1, 0x2f]."
    ranges.onRangeError(refused({ suggested: { fromBlock: 1n, toBlock: 0x2fn } }), {
      fromBlock: 1n,
      toBlock: 5000n,
    });
    expect(ranges.chunkSize()).toBe(47);
    expect(ranges.nextRange(1n, 5000n)).toEqual({ fromBlock: 1n, toBlock: 0x2fn });
  });

  test("behavior: shrinks to the provider's stated maximum", () => {
    const ranges = createLogRangeController({ maxChunk: 50_000 });
    ranges.onRangeError(refused({ maxBlockRange: 10_000 }), { fromBlock: 0n, toBlock: 49_999n });
    expect(ranges.chunkSize()).toBe(10_000);
  });

  test("behavior: a suggestion no smaller than the attempt halves instead", () => {
    const ranges = createLogRangeController({ maxChunk: 1000 });
    ranges.onRangeError(refused({ suggested: { fromBlock: 0n, toBlock: 5000n } }), {
      fromBlock: 0n,
      toBlock: 999n,
    });
    expect(ranges.chunkSize()).toBe(500);
  });

  test("behavior: never below one block", () => {
    const ranges = createLogRangeController({ maxChunk: 4 });
    for (let i = 0; i < 5; i++) {
      const range = ranges.nextRange(10n, 100n);
      ranges.onRangeError(refused(), range);
    }
    expect(ranges.chunkSize()).toBe(1);
    expect(ranges.nextRange(10n, 100n)).toEqual({ fromBlock: 10n, toBlock: 10n });
  });

  test("behavior: grows back to maxChunk after successes", () => {
    const ranges = createLogRangeController({ maxChunk: 5000 });
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
    const ranges = createLogRangeController({ maxChunk: 5000 });
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
    const ranges = createLogRangeController({ maxChunk: 10 });
    expect(() => ranges.nextRange(5n, 4n)).toThrow("empty block range: 5 > 4");
  });

  test("error: maxChunk must be positive", () => {
    expect(() => createLogRangeController({ maxChunk: 0 })).toThrow("maxChunk must be a positive integer");
  });
});
