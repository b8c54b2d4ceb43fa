/**
 * The reporting clock of a soak run: window `i` covers [i x windowMs, (i + 1) x windowMs) after `start`;
 * anything later (the drain after the load stops) counts in the last window.
 */
export type SoakWindows = {
  start: number;
  windowMs: number;
  count: number;
  /** the window `at` (default now, `performance.now()` ms) falls in */
  at(at?: number): number;
  /** ms since start */
  elapsed(): number;
};

export function createSoakWindows(windowMs: number, count: number): SoakWindows {
  const start = performance.now();
  return {
    start,
    windowMs,
    count,
    at: (at = performance.now()) => Math.min(count - 1, Math.max(0, Math.floor((at - start) / windowMs))),
    elapsed: () => performance.now() - start,
  };
}
