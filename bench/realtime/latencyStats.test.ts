import { describe, expect, test } from "vitest";
import { summarizeLatencies } from "./latencyStats.ts";

describe("summarizeLatencies", () => {
  test("default", () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(summarizeLatencies(samples)).toEqual({
      count: 100,
      p50: 50,
      p90: 90,
      p99: 99,
      max: 100,
      mean: 50.5,
    });
  });

  test("args: one sample", () => {
    expect(summarizeLatencies([7.5])).toEqual({
      count: 1,
      p50: 7.5,
      p90: 7.5,
      p99: 7.5,
      max: 7.5,
      mean: 7.5,
    });
  });

  test("args: fewer than 100 samples: p99 is the largest", () => {
    expect(summarizeLatencies([3, 1, 2]).p99).toBe(3);
    expect(summarizeLatencies([3, 1, 2]).p50).toBe(2);
  });

  test("args: typed array, numeric (not lexical) order", () => {
    expect(summarizeLatencies(new Float64Array([10, 9, 100])).p50).toBe(10);
  });

  test("error: no samples", () => {
    const summary = summarizeLatencies([]);
    expect(summary.count).toBe(0);
    expect(summary.p99).toBeNaN();
  });
});
