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
 * Bound the old generation's growth to HEAP_GROWING_PERCENT for the rest of this process (all its threads:
 * V8 flags are per process). Call it first thing, before the heap has grown.
 */
export function boundHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
