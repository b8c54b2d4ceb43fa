/** A latency distribution in milliseconds. */
export type LatencySummary = {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
};

/**
 * Summarize latencies (ms) with nearest-rank percentiles: the p-th percentile is the smallest sample with at
 * least p% of the samples at or below it, so p99 of 100 samples is the 99th smallest, always a real sample.
 * An empty input gives NaN everywhere (reported as "n/a", never as a pass).
 */
export function summarizeLatencies(samples: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  const count = sorted.length;
  if (count === 0)
    return { count, p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, max: Number.NaN, mean: Number.NaN };
  let sum = 0;
  for (const value of sorted) sum += value;
  const rank = (p: number) => sorted[Math.min(count, Math.max(1, Math.ceil((p / 100) * count))) - 1]!;
  return { count, p50: rank(50), p90: rank(90), p99: rank(99), max: sorted[count - 1]!, mean: sum / count };
}

/** Milliseconds since the Unix epoch with sub-millisecond precision, comparable across processes. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}
