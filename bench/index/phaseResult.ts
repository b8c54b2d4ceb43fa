import { readFile } from "node:fs/promises";
import { NonRetryableError } from "../../src/internal/errors.ts";
import type { RunName } from "./benchArgs.ts";

/** What a phase measured, in its own process. */
export type PhaseMeasurement = {
  /** transactions fetched (floor) or newly stored (protoscan) */
  transactions: number;
  /** wall time of the fetch / backfill itself */
  seconds: number;
  /** CPU time (user + system) of the phase's process during `seconds` (all its threads) */
  cpuSeconds: number;
  /** CPU time of the main thread alone (the event loop; bench/index/threadCpu.ts), null where not measurable */
  mainThreadCpuSeconds?: number | null;
  /** JSON-RPC calls sent, per method */
  requests: Record<string, number>;
  /** estimated Alchemy compute units of those calls */
  computeUnits: number;
  /** time before the measured part: opening the database and migrating (protoscan phases) */
  setupSeconds: number;
  notes: string;
};

/** A phase's measurement plus the peak resident set size of its process. */
export type PhaseResult = PhaseMeasurement & {
  phase: RunName;
  /** `process.resourceUsage().maxRSS` of the phase's process, in MiB */
  peakRssMb: number;
  /**
   * pglite-disk only: creating and migrating the data directory, in a process of its own before the backfill
   * (PGlite's initdb is the most memory-hungry thing it does, once per data directory)
   */
  create?: CreateResult;
  /** with `--rounds`: the `seconds` of every round (this result is the median one) */
  rounds?: number[];
};

/**
 * Which round `medianRun` and `medianStart` show, as the reports say it: of an odd number the median; of an
 * even number the faster of the middle two (of two rounds, the faster one).
 */
export function shownRound(rounds: number): string {
  return rounds % 2 === 1 ? "the median one is shown" : "the faster of the middle two is shown";
}

/** The median run of one phase over several rounds (by wall time), with every round's time attached. */
export function medianRun(runs: readonly PhaseResult[]): PhaseResult {
  const sorted = [...runs].sort((a, b) => a.seconds - b.seconds);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  if (!median) throw new NonRetryableError("medianRun: no runs");
  return runs.length > 1 ? { ...median, rounds: runs.map((r) => r.seconds) } : median;
}

/** What `indexPhase.ts --create-only` measured. */
export type CreateResult = { seconds: number; peakRssMb: number };

/** Read the result file of `indexPhase.ts --create-only`. */
export async function readCreateResult(path: string): Promise<CreateResult> {
  const parsed: unknown = JSON.parse(await readFile(path, "utf8"));
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    !("seconds" in parsed) ||
    typeof parsed.seconds !== "number" ||
    !("peakRssMb" in parsed) ||
    typeof parsed.peakRssMb !== "number"
  ) {
    throw new NonRetryableError(`${path} is not a create result`);
  }
  return { seconds: parsed.seconds, peakRssMb: parsed.peakRssMb };
}

/** Read the result file a phase process wrote. */
export async function readPhaseResult(path: string): Promise<PhaseResult> {
  const parsed: unknown = JSON.parse(await readFile(path, "utf8"));
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    !("phase" in parsed) ||
    !("transactions" in parsed) ||
    typeof parsed.transactions !== "number" ||
    !("seconds" in parsed) ||
    typeof parsed.seconds !== "number" ||
    !("peakRssMb" in parsed) ||
    typeof parsed.peakRssMb !== "number"
  ) {
    throw new NonRetryableError(`${path} is not a phase result`);
  }
  return parsed as PhaseResult;
}
