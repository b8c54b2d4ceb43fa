import { describe, expect, test } from "vitest";
import { backoffDelay } from "./backoffDelay.ts";

const options = { baseMs: 100, maxMs: 1000 };

describe("backoffDelay", () => {
  test("default: the cap doubles per attempt", () => {
    const max = () => 1;
    expect(backoffDelay(1, options, undefined, max)).toBe(100);
    expect(backoffDelay(2, options, undefined, max)).toBe(200);
    expect(backoffDelay(3, options, undefined, max)).toBe(400);
  });

  test("behavior: full jitter draws from zero to the cap", () => {
    expect(backoffDelay(3, options, undefined, () => 0)).toBe(0);
    expect(backoffDelay(3, options, undefined, () => 0.5)).toBe(200);
  });

  test("args: capped at maxMs", () => {
    expect(backoffDelay(10, options, undefined, () => 1)).toBe(1000);
    expect(backoffDelay(1000, options, undefined, () => 1)).toBe(1000);
  });

  test("args: Retry-After wins over the backoff, with at most 10% jitter", () => {
    expect(backoffDelay(1, options, 3000, () => 0)).toBe(3000);
    expect(backoffDelay(1, options, 3000, () => 1)).toBe(3300);
  });
});
