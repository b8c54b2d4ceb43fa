import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the old generation grow past what survived the last full collection, in percent.
 *
 * V8's default is tuned for throughput: while a program allocates fast and its collections are quick, the
 * next full collection waits until the old generation is up to four times what survived the last one. A
 * backfill allocates fast (every block, receipt and decoded transaction is garbage a moment later) over a
 * live set of about 50 MB, so the heap reached 250 MB and the process 430 MB before the first full
 * collection (`npm run bench:index`, PostgreSQL). At 50%, collections came sooner, each as short (the live set
 * is small), and peak RSS fell to 280 MB for about 5% more CPU; at 25%, `npm start` through 20,000
 * transactions peaked about 10 MB lower again, in the same time. See docs/performance.md ("Memory", "First
 * start").
 */
export const HEAP_GROWING_PERCENT = 25;

/**
 * The same growth while a process serves the API and its indexer (if it runs one) follows the head.
 *
 * At 25%, serving was paced by full collections: under 50 concurrent cold `GET /api/tx/:hash` (`bench:api`
 * txCold), the old generation filled its 25% every 0.6 s with what requests in flight had promoted, and each
 * full collection's marking held the event loop for up to 15 ms at a time: p99 41-49 ms. At 100% (V8's own
 * default ranges from 10% to 300%), in three alternated rounds: p99 22-27 ms, 10-15% more req/s at 15% less
 * CPU per request, for a heap that may reach twice the live set between collections (docs/performance.md,
 * "The 2026-11-27 fourth session"). A backfill's peak, judged against a third of Ponder's memory, keeps 25%.
 */
export const SERVING_HEAP_GROWING_PERCENT = 100;

/** What the process mainly does, for the heap's growth: indexing (a backfill), or serving at the head. */
export type HeapWork = "indexing" | "serving";

let heapWork: HeapWork | null = null;

/**
 * Set the old generation's growth for `work` (`HEAP_GROWING_PERCENT` or `SERVING_HEAP_GROWING_PERCENT`). V8
 * reads the flag whenever a full collection sets the next limit, so it applies from the next one.
 */
export function setHeapWork(work: HeapWork): void {
  if (work === heapWork) return;
  heapWork = work;
  const percent = work === "indexing" ? HEAP_GROWING_PERCENT : SERVING_HEAP_GROWING_PERCENT;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * The V8 settings protoscan runs with, for the rest of this process (all its threads: V8 flags are per
 * process). The CLI calls it first thing, before the heap has grown and before PGlite's WebAssembly is
 * compiled; the benchmarks call it too, so that they measure what runs.
 *
 * - `--heap-growing-percent`: the old generation's growth between full collections, HEAP_GROWING_PERCENT
 *   (`setHeapWork("indexing")`) until the process says it serves (`setHeapWork("serving")`).
 * - `--liftoff-only`: PGlite's WebAssembly (PostgreSQL) is compiled by V8's baseline tier (Liftoff) only, each
 *   function on its first call, and never again by the optimizing tier (TurboFan). TurboFan's compilations
 *   were most of the cost of opening a database and their memory stayed with the process: on `npm start`
 *   through 20,000 transactions, against `--no-liftoff` (TurboFan only), `/healthz` came 1.5 s sooner
 *   (3.3-3.8 → 1.5-2.2 s), the chain was indexed sooner (10.2-11.2 → 8.3-9.3 s) and the peak was no higher;
 *   against V8's default (Liftoff, then TurboFan for hot functions), the peak was 50-60 MB lower at the same
 *   speed. The cost: PostgreSQL's own work runs slower on its thread, which a backfill does not wait for
 *   (the event loop is its busiest thread); `bench:api`'s seeding of 100,000 transactions took 180 s instead
 *   of 167. V8 lists the flag among its testing flags: `tuneV8.test.ts` compiles all of PGlite's
 *   WebAssembly with it, so a PGlite that Liftoff cannot compile fails the tests, not a user's start.
 *   On PostgreSQL (no WebAssembly) it changes nothing. docs/performance.md ("First start").
 */
export function tuneV8(): void {
  setHeapWork("indexing");
  setFlagsFromString("--liftoff-only");
}
