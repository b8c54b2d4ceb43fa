import { describe, expect, test } from "vitest";
import { parseBenchArgs } from "./benchArgs.ts";
import type { StartResult } from "./cliStart.ts";
import { formatStartReport, medianStart } from "./startReport.ts";

const run = (phase: StartResult["phase"], indexedSeconds: number, peakTreeRssMb: number): StartResult => ({
  phase,
  healthzSeconds: 2,
  indexedSeconds,
  transactions: 20_054,
  peakTreeRssMb,
});

describe("formatStartReport", () => {
  test("judges protoscan against Ponder of the same run (a third of its memory is the line), Ponder against nothing", () => {
    const report = formatStartReport([run("start-pglite", 12, 270), run("start-ponder", 60, 800)]);
    expect(report).toContain("PASS  start-pglite   s to indexed      0.20x Ponder's (same run) <= 0.4x");
    expect(report).toContain("MISS  start-pglite   peak tree RSS MiB 0.34x Ponder's (same run) <= 0.33x");
    expect(report).not.toMatch(/(PASS|MISS) {2}start-ponder/);
  });

  test("a slower protoscan misses the same-run time ratio", () => {
    const report = formatStartReport([run("start-pglite", 30, 200), run("start-ponder", 60, 800)]);
    expect(report).toContain("MISS  start-pglite   s to indexed      0.50x Ponder's (same run) <= 0.4x");
    expect(report).toContain("PASS  start-pglite   peak tree RSS MiB 0.25x Ponder's (same run) <= 0.33x");
  });

  test("says which round it shows: of two rounds the faster, of three the median", () => {
    const two = formatStartReport([medianStart([run("start-pglite", 9, 260), run("start-pglite", 11, 262)])]);
    expect(two).toContain(
      "start-pglite rounds: 9.00, 11.00 s to indexed (the faster of the middle two is shown)",
    );
    expect(two).toMatch(/\| +9\.00 \|/);
    const three = formatStartReport([
      medianStart([run("start-pglite", 12, 260), run("start-pglite", 9, 262), run("start-pglite", 11, 261)]),
    ]);
    expect(three).toContain("start-pglite rounds: 12.00, 9.00, 11.00 s to indexed (the median one is shown)");
    expect(three).toMatch(/\| +11\.00 \|/);
  });

  test("without a Ponder run, nothing is judged against Ponder", () => {
    const report = formatStartReport([run("start-pglite", 11, 250)]);
    expect(report).not.toContain("Ponder's (same run)");
    expect(report).not.toMatch(/(PASS|MISS) {2}start-pglite {3}s to indexed/);
    expect(report).toContain("add start-ponder to judge");
  });
});

describe("parseBenchArgs", () => {
  test("start-ponder runs only when named", () => {
    expect(parseBenchArgs([]).startPhases).toBeNull();
    expect(parseBenchArgs(["--phases", "start-pglite,start-ponder"]).startPhases).toEqual([
      "start-pglite",
      "start-ponder",
    ]);
  });
});
