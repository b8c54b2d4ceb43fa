import { describe, expect, test } from "vitest";
import { parseRangeHint } from "./parseRangeHint.ts";

describe("parseRangeHint", () => {
  test("default: Alchemy suggestion in hex", () => {
    const message =
      "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x0, 0x1f3f]";
    expect(parseRangeHint(message)).toEqual({ suggested: { fromBlock: 0n, toBlock: 0x1f3fn } });
  });

  test("args: Infura suggestion in hex", () => {
    expect(
      parseRangeHint("query returned more than 10000 results. Try with this block range [0x1, 0x2f]."),
    ).toEqual({
      suggested: { fromBlock: 1n, toBlock: 47n },
    });
  });

  test("args: suggestion in decimal", () => {
    expect(parseRangeHint("Try with this block range [100, 149].")).toEqual({
      suggested: { fromBlock: 100n, toBlock: 149n },
    });
  });

  test("args: upper-case hex digits", () => {
    expect(parseRangeHint("this block range should work: [0xA, 0x1F]")).toEqual({
      suggested: { fromBlock: 10n, toBlock: 31n },
    });
  });

  test("args: QuickNode limit with thousands separator", () => {
    expect(parseRangeHint("eth_getLogs is limited to a 10,000 range")).toEqual({ maxBlockRange: 10_000 });
  });

  test("args: maximum block range", () => {
    expect(parseRangeHint("exceed maximum block range: 5000")).toEqual({ maxBlockRange: 5000 });
    expect(parseRangeHint("query exceeds max block range 100000")).toEqual({ maxBlockRange: 100_000 });
    expect(parseRangeHint("Max range: 3500")).toEqual({ maxBlockRange: 3500 });
    expect(parseRangeHint("please limit the query to at most 1000 blocks")).toEqual({ maxBlockRange: 1000 });
  });

  test("error: reversed suggestion is ignored", () => {
    expect(parseRangeHint("Try with this block range [0x2f, 0x1].")).toEqual({});
  });

  test("error: no hint", () => {
    expect(parseRangeHint("block range is too wide")).toEqual({});
    expect(parseRangeHint("query timeout exceeded")).toEqual({});
  });
});
