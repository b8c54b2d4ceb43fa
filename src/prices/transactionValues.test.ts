import { describe, expect, test } from "vitest";
import { transactionValueUsd, transferValueUsd } from "./transactionValues.ts";

describe("transferValueUsd", () => {
  test("default: amount scaled by decimals exactly, then times the price", () => {
    expect(transferValueUsd(1_500_000n, 6, 2)).toBe(3);
    expect(transferValueUsd(123456789012345678901234567890n, 18, 1)).toBe(
      Number("123456789012.345678901234567890"),
    );
  });
});

describe("transactionValueUsd", () => {
  const own = new Set(["0xpool"]);
  test("default: the larger of the flows into and out of the protocol", () => {
    expect(
      transactionValueUsd(
        [
          { fromAddress: "0xuser", toAddress: "0xpool", valueUsd: 10 },
          { fromAddress: "0xpool", toAddress: "0xuser", valueUsd: 12 },
          { fromAddress: "0xuser", toAddress: "0xother", valueUsd: 100 },
        ],
        own,
      ),
    ).toBe(12);
  });
  test("behavior: without a flow, the largest transfer", () => {
    expect(
      transactionValueUsd(
        [
          { fromAddress: "0xa", toAddress: "0xb", valueUsd: 3 },
          { fromAddress: "0xb", toAddress: "0xc", valueUsd: 7 },
        ],
        own,
      ),
    ).toBe(7);
  });
  test("behavior: null without transfers or without any priced one", () => {
    expect(transactionValueUsd([], own)).toBeNull();
    expect(
      transactionValueUsd([{ fromAddress: "0xa", toAddress: "0xpool", valueUsd: null }], own),
    ).toBeNull();
  });
  test("behavior: an unpriced flow counts 0 when another transfer is priced", () => {
    expect(
      transactionValueUsd(
        [
          { fromAddress: "0xa", toAddress: "0xpool", valueUsd: null },
          { fromAddress: "0xa", toAddress: "0xb", valueUsd: 5 },
        ],
        own,
      ),
    ).toBe(0);
  });
});
