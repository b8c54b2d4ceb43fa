import type { BenchChain } from "./buildChain.ts";
import { type PhaseResult, shownRound } from "./phaseResult.ts";

/** The indexer's performance targets (docs/performance.md). */
export const TARGETS = {
  /** protoscan's backfill time / the viem floor's time, on PGlite */
  ratio: 1.5,
  ratioGoal: 1.3,
  computeUnitsPerTransaction: 50,
  peakRssMb: 300,
} as const;

export type TargetCheck = { phase: string; target: string; value: number; limit: number; pass: boolean };

const LABELS: Record<PhaseResult["phase"], string> = {
  floor: "(a) viem floor: logs + tx + receipt",
  "pglite-disk": "(b) protoscan -> PGlite on disk",
  "pglite-memory": "(b) protoscan -> PGlite memory://",
  postgres: "(c) protoscan -> PostgreSQL",
  baseline: "(b) baseline -> PGlite on disk",
  "no-store": "(p) protoscan, commits skipped",
};

const perSecond = (r: PhaseResult) => r.transactions / r.seconds;
const requestCount = (r: PhaseResult) => Object.values(r.requests).reduce((a, b) => a + b, 0);

/** b/a: how much longer protoscan takes than the floor for the same transactions (1.0 = as fast). */
export function ratioToFloor(result: PhaseResult, floor: PhaseResult | undefined): number | null {
  if (!floor || result.phase === "floor") return null;
  return perSecond(floor) / perSecond(result);
}

/** Check the targets that apply to each protoscan phase of this tree (not the floor, baseline or no-store). */
export function checkTargets(results: readonly PhaseResult[]): TargetCheck[] {
  const floor = results.find((r) => r.phase === "floor");
  const checks: TargetCheck[] = [];
  for (const r of results) {
    if (r.phase === "floor" || r.phase === "baseline" || r.phase === "no-store") continue;
    const ratio = ratioToFloor(r, floor);
    if (ratio !== null && r.phase.startsWith("pglite")) {
      checks.push({
        phase: r.phase,
        target: "ratio b/a",
        value: ratio,
        limit: TARGETS.ratio,
        pass: ratio <= TARGETS.ratio,
      });
    }
    const cu = r.computeUnits / r.transactions;
    checks.push({
      phase: r.phase,
      target: "CU per tx",
      value: cu,
      limit: TARGETS.computeUnitsPerTransaction,
      pass: cu <= TARGETS.computeUnitsPerTransaction,
    });
    checks.push({
      phase: r.phase,
      target: "peak RSS MB",
      value: r.peakRssMb,
      limit: TARGETS.peakRssMb,
      pass: r.peakRssMb <= TARGETS.peakRssMb,
    });
  }
  return checks;
}

/**
 * This tree's PGlite disk phase against the baseline's (`--baseline`), from their median runs, or null
 * without both.
 */
export function compareToBaseline(
  results: readonly PhaseResult[],
  baseline: { ref: string; commit: string },
): string | null {
  const ours = results.find((r) => r.phase === "pglite-disk");
  const theirs = results.find((r) => r.phase === "baseline");
  if (!ours || !theirs) return null;
  const change = (a: number, b: number) => `${a > b ? "+" : ""}${(((a - b) / b) * 100).toFixed(1)}%`;
  return [
    `against the baseline ${baseline.ref} (${baseline.commit.slice(0, 12)}), PGlite on disk, median runs:`,
    `seconds ${ours.seconds.toFixed(2)} vs ${theirs.seconds.toFixed(2)} (${change(ours.seconds, theirs.seconds)}),`,
    `CPU s ${ours.cpuSeconds.toFixed(2)} vs ${theirs.cpuSeconds.toFixed(2)} (${change(ours.cpuSeconds, theirs.cpuSeconds)}),`,
    `peak RSS MB ${ours.peakRssMb.toFixed(0)} vs ${theirs.peakRssMb.toFixed(0)}`,
  ].join(" ");
}

/** The results table and the target checks, as printed by `npm run bench:index`. */
export function formatReport(
  chain: BenchChain,
  results: readonly PhaseResult[],
  baseline?: { ref: string; commit: string },
): string {
  const floor = results.find((r) => r.phase === "floor");
  const head = [
    "phase",
    "txs",
    "seconds",
    "tx/s",
    "ratio b/a",
    "CPU s",
    "main-thread CPU s",
    "RPC req/tx",
    "CU/tx",
    "peak RSS MB",
  ];
  const rows = results.map((r) => {
    const ratio = ratioToFloor(r, floor);
    return [
      LABELS[r.phase],
      String(r.transactions),
      r.seconds.toFixed(2),
      perSecond(r).toFixed(0),
      ratio === null ? "-" : ratio.toFixed(2),
      r.cpuSeconds.toFixed(2),
      r.mainThreadCpuSeconds == null ? "-" : r.mainThreadCpuSeconds.toFixed(2),
      (requestCount(r) / r.transactions).toFixed(3),
      (r.computeUnits / r.transactions).toFixed(1),
      r.peakRssMb.toFixed(0),
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const out = [
    `chain: ${chain.generated} generated protocol transactions, ${chain.perBlock} per block, blocks ${chain.fromBlock}-${chain.toBlock} (built in ${chain.buildSeconds.toFixed(1)} s)`,
    "",
    line(head),
    `|${widths.map((w, i) => (i === 0 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`,
    ...rows.map(line),
    "",
    "per phase:",
    ...results.flatMap((r) => [
      `  ${r.phase}: ${Object.entries(r.requests)
        .sort((a, b) => b[1] - a[1])
        .map(([m, n]) => `${m} ${n}`)
        .join(", ")}`,
      `    ${r.notes}; set-up before the measured part ${r.setupSeconds.toFixed(2)} s`,
      ...(r.rounds
        ? [`    rounds: ${r.rounds.map((s) => s.toFixed(2)).join(", ")} s (${shownRound(r.rounds.length)})`]
        : []),
      ...(r.phase === "no-store"
        ? [
            "    a diagnostic: the PGlite disk backfill with every commit skipped (nothing stored, the cursor never moves)",
          ]
        : []),
      ...(r.phase === "pglite-memory"
        ? [
            "    memory:// has no data directory to create first: its peak RSS includes loading the template (or initdb without one)",
          ]
        : []),
      ...(r.create
        ? [
            `    data directory created by a process of its own first (a copy of the migrated template npm install builds; without one, initdb + migrations): ${r.create.seconds.toFixed(1)} s, peak RSS ${r.create.peakRssMb.toFixed(0)} MB`,
          ]
        : []),
    ]),
    ...(baseline ? ["", compareToBaseline(results, baseline) ?? "no baseline run to compare with"] : []),
    "",
    "targets:",
    ...checkTargets(results).map((c) => {
      const goal =
        c.target === "ratio b/a"
          ? ` (goal ${TARGETS.ratioGoal}: ${c.value <= TARGETS.ratioGoal ? "met" : "not met"})`
          : "";
      return `  ${c.pass ? "PASS" : "MISS"}  ${c.phase.padEnd(13)} ${c.target.padEnd(11)} ${c.value.toFixed(2)} <= ${c.limit}${goal}`;
    }),
  ];
  return out.join("\n");
}
