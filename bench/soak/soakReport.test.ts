import { expect, test } from "vitest";
import { judgeRss } from "./judgeRss.ts";
import { describeRss, formatCriteria, formatWindowTable } from "./soakReport.ts";

const MB = 1024 * 1024;

test("default: one column per window and one for the run after the warm-up window", () => {
  const rss = judgeRss(
    [0, 1, 2].map((w) => ({ atMs: w * 10_000 + 1, bytes: (200 + w * 10) * MB })),
    10_000,
    3,
  );
  const table = formatWindowTable({
    windowSeconds: 10,
    labels: new Map([["tx", "tx by hash"]]),
    latencies: new Map([["tx", [[50], [1, 2, 3, 4], [5, 6]]]]),
    completed: [100, 200, 300],
    rss,
    load: [1.5, 2, 2.25],
    wsMessages: [7, 8, 9],
    wsReady: [[30], [40, 41], []],
  });
  const lines = table.split("\n");
  expect(lines[0]!.trim().split(/\s+/)).toEqual(["10s", "20s", "30s", "after", "w1"]);
  expect(lines[1]!.split(/\s+/)).toEqual(["req/s", "(completed)", "10.0", "20.0", "30.0", "25.0"]);
  expect(lines[2]!.split(/\s+/).slice(-4)).toEqual(["50", "4.0", "6.0", "6.0"]);
  expect(table).toMatch(/RSS MB median\s+200\s+210\s+220/);
  expect(table).toMatch(/WS tx messages\s+7\s+8\s+9\s+17/);
  expect(table).toMatch(/p99 ms WS connect\+subscribe\s+30\s+41\s+n\/a\s+41/);
  expect(table).toMatch(/load \(1 min\)\s+1\.5\s+2\.0\s+2\.3/);
  expect(describeRss(rss)).toMatch(
    /210 MB in window 2 -> 220 MB in the last window \(\+10 MB, allowed \+50 MB/,
  );
});

test("default: criteria lines", () => {
  expect(
    formatCriteria([
      { name: "errors", pass: true, detail: "0" },
      { name: "RSS flat", pass: false, detail: "+80 MB" },
    ]),
  ).toBe("PASS  errors: 0\nMISS  RSS flat: +80 MB");
});
