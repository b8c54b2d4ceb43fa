import { describe, expect, test } from "vitest";
import {
  formatAge,
  formatEther,
  formatInteger,
  formatShare,
  formatUnits,
  formatUsd,
  shortHex,
} from "./format.ts";

describe("format", () => {
  test("default: integers get thousands separators, beyond 2^53 too", () => {
    expect(formatInteger(1234567)).toBe("1,234,567");
    expect(formatInteger("123456789012345678901234567890")).toBe("123,456,789,012,345,678,901,234,567,890");
    expect(formatInteger(0n)).toBe("0");
  });

  test("default: amounts are scaled by decimals exactly; the shown value is cut and marked", () => {
    expect(formatUnits("1234500000000000000000", 18)).toEqual({ text: "1,234.5", exact: "1,234.5" });
    expect(formatUnits("1234567891234567890", 18)).toEqual({ text: "~1.2345", exact: "1.23456789123456789" });
    expect(formatUnits("1", 18)).toEqual({ text: "<0.0001", exact: "0.000000000000000001" });
    expect(formatUnits("42", 0)).toEqual({ text: "42", exact: "42" });
    expect(formatUnits("1000000", 6)).toEqual({ text: "1", exact: "1" });
  });

  test("default: ETH keeps the wei in the exact value", () => {
    expect(formatEther("1500000000000000000")).toEqual({
      text: "1.5 ETH",
      exact: "1.5 ETH (1,500,000,000,000,000,000 wei)",
    });
  });

  test("default: USD is compact above $1,000, exact on hover; null is a dash", () => {
    expect(formatUsd(5_012_345.678).text).toBe("$5.01M");
    expect(formatUsd(5_012_345.678).exact).toBe("$5,012,345.678");
    expect(formatUsd(12.345).text).toBe("$12.35");
    expect(formatUsd(0.001).text).toBe("<$0.01");
    expect(formatUsd(null)).toEqual({ text: "—", exact: "not priced" });
  });

  test("default: shares, short hex and relative ages", () => {
    expect(formatShare(0.25344).text).toBe("25.34%");
    expect(formatShare(0.00000001).text).toBe("<0.01%");
    expect(shortHex("0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc")).toEqual({
      text: "0x9965…A4dc",
      exact: "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
    });
    const now = Date.parse("2026-11-21T08:00:00.000Z");
    expect(formatAge("2026-11-21T07:59:48.000Z", now)).toBe("12 s ago");
    expect(formatAge("2026-11-21T07:55:00.000Z", now)).toBe("5 min ago");
    expect(formatAge("2026-11-21T05:00:00.000Z", now)).toBe("3 h ago");
    expect(formatAge("2026-11-19T08:00:00.000Z", now)).toBe("2 d ago");
    expect(formatAge("2026-11-21T08:00:03.000Z", now)).toBe("in 3 s");
  });
});
