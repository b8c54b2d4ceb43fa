/** One reading of the protoscan process' resident set size, `atMs` after the load started. */
export type RssSample = { atMs: number; bytes: number };

/** How much the last window's median RSS may exceed the baseline's: 15% or 50 MB, whichever is larger. */
export const RSS_GROWTH_RATIO = 0.15;
export const RSS_GROWTH_BYTES = 50 * 1024 * 1024;

export type RssWindow = { median: number; max: number; samples: number };

export type RssVerdict = {
  /** median and max per window, in bytes (NaN for a window without a sample) */
  windows: RssWindow[];
  /** median of window 1 (the first after the warm-up window 0) */
  baseline: number;
  /** median of the last window */
  last: number;
  /** last - baseline, in bytes */
  growth: number;
  /** least-squares slope of every sample after the warm-up window, in bytes per minute */
  slopePerMinute: number;
  /** growth <= max(15% of baseline, 50 MB) */
  flat: boolean;
};

/**
 * Decide whether memory stayed flat. "Flat" is defined precisely as: the median RSS of the last window is at
 * most max(15%, 50 MB) above the median RSS of window 1. Window 0 is the warm-up (caches filling, JIT, the
 * first WebSocket clients) and is not judged. Medians, not maxima, so that a GC sawtooth inside one window
 * does not decide the verdict; the slope over the post-warm-up samples is reported beside it.
 */
export function judgeRss(samples: readonly RssSample[], windowMs: number, windowCount: number): RssVerdict {
  const buckets: number[][] = Array.from({ length: windowCount }, () => []);
  for (const s of samples) buckets[Math.min(windowCount - 1, Math.floor(s.atMs / windowMs))]?.push(s.bytes);
  const windows = buckets.map((values) => ({
    median: median(values),
    max: values.length === 0 ? Number.NaN : Math.max(...values),
    samples: values.length,
  }));
  const baseline = windows[1]?.median ?? Number.NaN;
  const last = windows[windowCount - 1]?.median ?? Number.NaN;
  const growth = last - baseline;
  const flat = growth <= Math.max(RSS_GROWTH_RATIO * baseline, RSS_GROWTH_BYTES);
  return {
    windows,
    baseline,
    last,
    growth,
    slopePerMinute: slope(samples.filter((s) => s.atMs >= windowMs)) * 60_000,
    // NaN (a window without samples) compares false: no verdict is a MISS, never a PASS.
    flat,
  };
}

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Least-squares slope of bytes over milliseconds (0 with fewer than two samples). */
function slope(samples: readonly RssSample[]): number {
  const n = samples.length;
  if (n < 2) return 0;
  let sx = 0;
  let sy = 0;
  for (const s of samples) {
    sx += s.atMs;
    sy += s.bytes;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.atMs - mx) * (s.bytes - my);
    den += (s.atMs - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}
