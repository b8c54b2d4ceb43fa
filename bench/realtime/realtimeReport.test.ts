import { describe, expect, test } from "vitest";
import { summarizeLatencies } from "./latencyStats.ts";
import { formatRealtimeReport, type ReportRow, verdict } from "./realtimeReport.ts";

const row = (samples: number[], target: number | null): ReportRow => ({
  label: "webhook",
  from: "request -> WS message",
  summary: summarizeLatencies(samples),
  target,
});

describe("verdict", () => {
  test("default: p99 at the target passes", () => {
    expect(verdict(row([100, 300], 300))).toBe("PASS");
  });

  test("args: p99 over the target misses", () => {
    expect(verdict(row([100, 300.5], 300))).toBe("MISS");
  });

  test("args: no target, no verdict", () => {
    expect(verdict(row([1], null))).toBe("");
  });

  test("error: nothing measured misses", () => {
    expect(verdict(row([], 300))).toBe("MISS");
  });
});

describe("formatRealtimeReport", () => {
  test("default", () => {
    const text = formatRealtimeReport([row([10, 20, 30], 300), { ...row([400], null), label: "burst" }]);
    const lines = text.split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^\| path +\| latency measured +\| samples \| +p50 \|/);
    expect(lines[2]).toContain("| webhook | request -> WS message |       3 |");
    expect(lines[2]).toContain("30.0 ms | <= 300 ms  | PASS   |");
    expect(lines[3]).toContain("400.0 ms | -          | -      |");
    // every line as wide as the header
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
  });
});
