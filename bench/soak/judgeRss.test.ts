import { expect, test } from "vitest";
import { judgeRss, type RssSample } from "./judgeRss.ts";

const MB = 1024 * 1024;
/** One sample per second for `windows` windows of 10 s, RSS given per second. */
const series = (windows: number, rssAt: (second: number) => number): RssSample[] =>
  Array.from({ length: windows * 10 }, (_, s) => ({ atMs: s * 1000 + 500, bytes: rssAt(s) }));

test("default: flat after a warm-up climb", () => {
  // Climbs 100 MB in the warm-up window, then a GC sawtooth of +-10 MB around 300 MB.
  const verdict = judgeRss(
    series(6, (s) => (s < 10 ? 200 * MB + s * 10 * MB : 300 * MB + (s % 2 === 0 ? 10 : -10) * MB)),
    10_000,
    6,
  );
  expect(verdict.windows.map((w) => w.samples)).toEqual([10, 10, 10, 10, 10, 10]);
  expect(verdict.baseline).toBe(300 * MB);
  expect(verdict.last).toBe(300 * MB);
  expect(verdict.growth).toBe(0);
  expect(Math.abs(verdict.slopePerMinute)).toBeLessThan(3 * MB);
  expect(verdict.flat).toBe(true);
});

test("behavior: a steady leak is not flat", () => {
  // +2 MB a second: 100 MB between the medians of window 1 and window 5.
  const verdict = judgeRss(
    series(6, (s) => 300 * MB + s * 2 * MB),
    10_000,
    6,
  );
  expect(verdict.growth).toBe(80 * MB);
  expect(verdict.slopePerMinute).toBeCloseTo(120 * MB, -3);
  expect(verdict.flat).toBe(false);
});

test("behavior: 15% of a large baseline allows more than 50 MB", () => {
  const verdict = judgeRss(
    series(3, (s) => (s < 20 ? 1000 * MB : 1140 * MB)),
    10_000,
    3,
  );
  expect(verdict.growth).toBe(140 * MB);
  expect(verdict.flat).toBe(true);
});

test("behavior: growth of 50 MB on a small baseline is flat, 51 MB is not", () => {
  const at = (growth: number) =>
    judgeRss(
      series(3, (s) => (s < 20 ? 100 * MB : (100 + growth) * MB)),
      10_000,
      3,
    ).flat;
  expect(at(50)).toBe(true);
  expect(at(51)).toBe(false);
});

test("behavior: samples past the last window count in it", () => {
  const verdict = judgeRss(
    [
      { atMs: 15_000, bytes: MB },
      { atMs: 31_000, bytes: 2 * MB },
    ],
    10_000,
    3,
  );
  expect(verdict.windows.map((w) => w.samples)).toEqual([0, 1, 1]);
  expect(verdict.last).toBe(2 * MB);
});

test("error: a window without samples is no verdict, never a pass", () => {
  const verdict = judgeRss([{ atMs: 500, bytes: MB }], 10_000, 3);
  expect(Number.isNaN(verdict.baseline)).toBe(true);
  expect(verdict.flat).toBe(false);
});
