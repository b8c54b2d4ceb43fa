import { describe, expect, test } from "vitest";
import { ApiError } from "./errorRegistry.ts";
import { historyBuckets, parseHistoryRange, parseTime } from "./historyRange.ts";

const now = new Date("2026-11-20T10:30:00.000Z");

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
  }
  return undefined;
}

describe("parseHistoryRange", () => {
  test("default: day, the last 30 days, 31 buckets ending today", () => {
    const range = parseHistoryRange({}, now);
    expect(range.interval).toBe("day");
    expect(range.to).toEqual(now);
    expect(range.from).toEqual(new Date("2026-10-21T10:30:00.000Z"));
    expect(historyBuckets(range)).toHaveLength(31);
    expect(historyBuckets(range)[0]).toEqual(new Date("2026-10-21T00:00:00.000Z"));
    expect(historyBuckets(range).at(-1)).toEqual(new Date("2026-11-20T00:00:00.000Z"));
  });

  test("args: hour defaults to the last 48 hours", () => {
    const range = parseHistoryRange({ interval: "hour" }, now);
    expect(range.from).toEqual(new Date("2026-11-18T10:30:00.000Z"));
    expect(historyBuckets(range)).toHaveLength(49);
    expect(historyBuckets(range)[1]!.getTime() - historyBuckets(range)[0]!.getTime()).toBe(3_600_000);
  });

  test("args: from and to as unix seconds and ISO 8601", () => {
    const range = parseHistoryRange(
      {
        interval: "hour",
        from: String(Date.parse("2026-11-20T00:00:00Z") / 1000),
        to: "2026-11-20T02:00:00Z",
      },
      now,
    );
    expect(historyBuckets(range).map((b) => b.toISOString())).toEqual([
      "2026-11-20T00:00:00.000Z",
      "2026-11-20T01:00:00.000Z",
      "2026-11-20T02:00:00.000Z",
    ]);
  });

  test("args: exactly 1,000 buckets is accepted, 1,001 refused", () => {
    const from = "2026-01-01T00:00:00Z";
    const to999 = new Date(Date.parse(from) + 999 * 3_600_000).toISOString();
    expect(historyBuckets(parseHistoryRange({ interval: "hour", from, to: to999 }, now))).toHaveLength(1000);
    const to1000 = new Date(Date.parse(from) + 1000 * 3_600_000).toISOString();
    expect(codeOf(() => parseHistoryRange({ interval: "hour", from, to: to1000 }, now))).toMatch(
      /^INVALID_PARAMETER: from: the range holds 1001 hour buckets/,
    );
  });

  test("error: unknown interval", () => {
    expect(codeOf(() => parseHistoryRange({ interval: "week" }, now))).toBe(
      "INVALID_PARAMETER: interval: must be `hour` or `day`",
    );
  });

  test("error: from after to", () => {
    expect(codeOf(() => parseHistoryRange({ from: "2026-11-02", to: "2026-11-01" }, now))).toBe(
      "INVALID_PARAMETER: from: must not be after `to`",
    );
  });

  test("error: unreadable times", () => {
    for (const bad of ["yesterday", "", "-5", "2026-13-45", "1e9", "99999999999999"]) {
      expect(codeOf(() => parseTime("to", bad))).toBe(
        "INVALID_PARAMETER: to: must be ISO 8601 or unix seconds",
      );
    }
  });

  test("args: a date and time without a zone is UTC", () => {
    expect(parseTime("from", "2026-11-20T05:00:00")).toEqual(new Date("2026-11-20T05:00:00.000Z"));
    expect(parseTime("from", "2026-11-20")).toEqual(new Date("2026-11-20T00:00:00.000Z"));
  });
});
