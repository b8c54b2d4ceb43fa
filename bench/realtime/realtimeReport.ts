import type { LatencySummary } from "./latencyStats.ts";

/** Issue 5 item 4: p99 targets in milliseconds. */
export const REALTIME_TARGETS = {
  polling: 1500,
  webhook: 300,
  trackTx: 300,
  fanout: 100,
} as const;

/** One line of the report: a measured path, its distribution and (when it has one) its p99 target. */
export type ReportRow = {
  label: string;
  /** what one sample measures, in a few words */
  from: string;
  summary: LatencySummary;
  /** p99 target in ms; null for an informative row */
  target: number | null;
};

/** PASS when the p99 is at or under the target, MISS otherwise (also when nothing was measured). */
export function verdict(row: ReportRow): "PASS" | "MISS" | "" {
  if (row.target === null) return "";
  return Number.isFinite(row.summary.p99) && row.summary.p99 <= row.target ? "PASS" : "MISS";
}

const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : "n/a");

/** The report as an aligned plain-text table (also valid Markdown), one row per measured path. */
export function formatRealtimeReport(rows: readonly ReportRow[]): string {
  const header = ["path", "latency measured", "samples", "p50", "p90", "p99", "max", "p99 target", "result"];
  const lines = rows.map((row) => [
    row.label,
    row.from,
    String(row.summary.count),
    ms(row.summary.p50),
    ms(row.summary.p90),
    ms(row.summary.p99),
    ms(row.summary.max),
    row.target === null ? "-" : `<= ${row.target} ms`,
    verdict(row) || "-",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => (i >= 2 && i <= 6 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join(" | ")} |`;
  const rule = `| ${widths.map((w, i) => (i >= 2 && i <= 6 ? `${"-".repeat(w - 1)}:` : "-".repeat(w))).join(" | ")} |`;
  return [format(header), rule, ...lines.map(format)].join("\n");
}
