import { sleep } from "../internal/sleep.ts";

/** A client-side requests-per-second ceiling (one bucket per RPC URL). */
export type TokenBucket = {
  /** Resolve when one request may be sent; reject with the signal's reason if it aborts first. */
  take(signal?: AbortSignal): Promise<void>;
};

export type TokenBucketOptions = {
  ratePerSecond: number;
  /** Burst size (default: one second's worth, at least 1). */
  capacity?: number;
  /** Clock in ms (tests). */
  now?: () => number;
};

/**
 * A token bucket with reservations: every `take` removes a token at once, possibly going into debt, and
 * waits until the debt it added is paid back by the refill. Callers are therefore served in order and the
 * long-run rate never exceeds `ratePerSecond`, whatever the burst of concurrent callers.
 */
export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  const rate = options.ratePerSecond;
  const capacity = options.capacity ?? Math.max(1, Math.floor(rate));
  const now = options.now ?? (() => performance.now());
  let tokens = capacity;
  let last = now();
  return {
    take(signal) {
      const t = now();
      tokens = Math.min(capacity, tokens + ((t - last) * rate) / 1000);
      last = t;
      tokens -= 1;
      if (tokens >= 0) return Promise.resolve();
      return sleep((-tokens / rate) * 1000, signal).catch((error: unknown) => {
        tokens += 1; // give the reservation back
        throw error;
      });
    },
  };
}
