import { summarizeLatencies } from "../realtime/latencyStats.ts";
import type { RssVerdict } from "./judgeRss.ts";
import { RSS_GROWTH_BYTES, RSS_GROWTH_RATIO } from "./judgeRss.ts";

export type Criterion = { name: string; pass: boolean; detail: string };

/** What the report shows, gathered by bench/soak.ts. */
export type SoakFigures = {
  windowSeconds: number;
  /** endpoint key -> label */
  labels: Map<string, string>;
  /** endpoint key -> latencies (ms) per window */
  latencies: Map<string, number[][]>;
  /** requests completed per window */
  completed: number[];
  rss: RssVerdict;
  /** 1-minute load average at the end of each window */
  load: number[];
  /** WebSocket transaction messages received per window (the long-lived client) */
  wsMessages: number[];
  /** WebSocket connect + subscribe times (ms) per window */
  wsReady: number[][];
};

const MB = 1024 * 1024;
const mb = (bytes: number) => (Number.isNaN(bytes) ? "n/a" : (bytes / MB).toFixed(0));
const ms = (value: number) =>
  Number.isNaN(value) ? "n/a" : value < 10 ? value.toFixed(1) : value.toFixed(0);

/**
 * The per-window table: one column per window (minute by default), rows for throughput, p99 of each endpoint
 * and of WebSocket connect + subscribe, median and max RSS, WebSocket messages and load; the last column
 * ("after w1") is the whole run after the first window, the warm-up.
 */
export function formatWindowTable(f: SoakFigures): string {
  const n = f.completed.length;
  const head = ["", ...Array.from({ length: n }, (_, i) => `${(i + 1) * f.windowSeconds}s`), "after w1"];
  const rows: string[][] = [head];
  const rest = <T>(values: readonly T[]) => values.slice(1);
  const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
  rows.push([
    "req/s (completed)",
    ...f.completed.map((c) => (c / f.windowSeconds).toFixed(1)),
    (sum(rest(f.completed)) / (f.windowSeconds * (n - 1))).toFixed(1),
  ]);
  for (const [key, windows] of f.latencies) {
    rows.push([
      `p99 ms ${f.labels.get(key) ?? key}`,
      ...windows.map((w) => ms(summarizeLatencies(w).p99)),
      ms(summarizeLatencies(rest(windows).flat()).p99),
    ]);
  }
  rows.push([
    "p99 ms all reads",
    ...Array.from({ length: n }, (_, i) =>
      ms(summarizeLatencies([...f.latencies.values()].flatMap((w) => w[i] ?? [])).p99),
    ),
    ms(summarizeLatencies([...f.latencies.values()].flatMap((w) => rest(w).flat())).p99),
  ]);
  rows.push([
    "p99 ms WS connect+subscribe",
    ...f.wsReady.map((w) => ms(summarizeLatencies(w).p99)),
    ms(summarizeLatencies(rest(f.wsReady).flat()).p99),
  ]);
  rows.push(["RSS MB median", ...f.rss.windows.map((w) => mb(w.median)), ""]);
  rows.push(["RSS MB max", ...f.rss.windows.map((w) => mb(w.max)), ""]);
  rows.push(["WS tx messages", ...f.wsMessages.map(String), String(sum(rest(f.wsMessages)))]);
  rows.push(["load (1 min)", ...f.load.map((l) => l.toFixed(1)), ""]);
  const widths = head.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  return rows
    .map((r) =>
      r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  "),
    )
    .join("\n");
}

/** The RSS verdict in words: the definition of "flat" and the figures it was applied to. */
export function describeRss(rss: RssVerdict): string {
  const allowed = Math.max(RSS_GROWTH_RATIO * rss.baseline, RSS_GROWTH_BYTES);
  return (
    `median RSS ${mb(rss.baseline)} MB in window 2 -> ${mb(rss.last)} MB in the last window ` +
    `(${rss.growth >= 0 ? "+" : ""}${mb(rss.growth)} MB, allowed +${mb(allowed)} MB = max(15%, 50 MB)); ` +
    `slope after warm-up ${(rss.slopePerMinute / MB).toFixed(2)} MB/min`
  );
}

/** `PASS|MISS name: detail`, one line per criterion. */
export function formatCriteria(criteria: readonly Criterion[]): string {
  return criteria.map((c) => `${c.pass ? "PASS" : "MISS"}  ${c.name}: ${c.detail}`).join("\n");
}
