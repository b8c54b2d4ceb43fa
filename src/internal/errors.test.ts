import { describe, expect, test } from "vitest";
import { BaseError, RetryableError, walk } from "./errors.ts";

const isRetryable = (error: unknown): error is RetryableError => error instanceof RetryableError;

describe("walk", () => {
  test("default: the first matching error of the cause chain", () => {
    const inner = new RetryableError("inner");
    const middle = new RetryableError("middle", { cause: inner });
    const outer = new Error("outer", { cause: middle });
    expect(walk(outer, isRetryable)).toBe(middle);
    expect(walk(inner, isRetryable)).toBe(inner);
  });

  test("behavior: plain objects with a cause are followed too", () => {
    const inner = new RetryableError("inner");
    expect(walk({ cause: { cause: inner } }, isRetryable)).toBe(inner);
  });

  test("behavior: none matches, not an object, or deeper than 10 causes", () => {
    expect(walk(new BaseError("x", { cause: new Error("y") }), isRetryable)).toBeUndefined();
    expect(walk("text", isRetryable)).toBeUndefined();
    expect(walk(undefined, isRetryable)).toBeUndefined();
    let deep: unknown = new RetryableError("deep");
    for (let i = 0; i < 10; i++) deep = new Error(`wrap ${i}`, { cause: deep });
    expect(walk(deep, isRetryable)).toBeUndefined();
  });

  test("behavior: a cycle ends", () => {
    const a: { cause?: unknown } = {};
    a.cause = { cause: a };
    expect(walk(a, isRetryable)).toBeUndefined();
  });
});
