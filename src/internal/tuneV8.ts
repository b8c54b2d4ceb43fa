import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the old generation grow past what survived the last full collection, in percent.
 *
 * V8's default is tuned for throughput: while a program allocates fast and its collections are quick, the
 * next full collection waits until the old generation is up to four times what survived the last one. A
 * backfill allocates fast (every block, receipt and decoded transaction is garbage a moment later) over a
 * live set of about 50 MB, so the heap reached 250 MB and the process 430 MB before the first full
 * collection (`npm run bench:index`, PostgreSQL). At 50%, collections come sooner, each as short (the live set
 * is small), and peak RSS fell to 280 MB for about 5% more CPU. See docs/performance.md ("Memory").
 */
export const HEAP_GROWING_PERCENT = 50;

/**
 * The V8 settings protoscan runs with, for the rest of this process (all its threads: V8 flags are per
 * process). The CLI calls it first thing, before the heap has grown and before PGlite's WebAssembly is
 * compiled; the benchmarks call it too, so that they measure what runs.
 *
 * - `--heap-growing-percent` (HEAP_GROWING_PERCENT): the old generation's growth between full collections.
 * - `--no-liftoff`: PGlite's WebAssembly (PostgreSQL) is compiled by V8's optimizing tier only, each
 *   function on its first call, instead of by the baseline tier first and again by the optimizing tier once
 *   it is hot. The second compilation's memory stays with the process after it: a PGlite backfill peaked
 *   50-60 MB lower (about 330 MB instead of 375-400) and used 0.3-0.5 CPU-s less; opening a data directory
 *   takes about 1 s longer, as PostgreSQL's start-up code is compiled optimized. docs/performance.md
 *   ("Memory"). On PostgreSQL (no WebAssembly) it changes nothing.
 */
export function tuneV8(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  setFlagsFromString("--no-liftoff");
}
