import { describe, expect, test } from "vitest";
import { parseRetryAfter } from "./parseRetryAfter.ts";

describe("parseRetryAfter", () => {
  test("default: delay-seconds", () => {
    expect(parseRetryAfter("2")).toBe(2000);
    expect(parseRetryAfter(" 0 ")).toBe(0);
  });

  test("args: fractional seconds", () => {
    expect(parseRetryAfter("1.5")).toBe(1500);
  });

  test("args: HTTP-date", () => {
    const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:03 GMT", now)).toBe(3000);
  });

  test("args: HTTP-date in the past", () => {
    const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:27:00 GMT", now)).toBe(0);
  });

  test("error: absent or unreadable", () => {
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter("")).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter("-1")).toBeUndefined();
  });
});
