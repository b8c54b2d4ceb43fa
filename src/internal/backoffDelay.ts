export type BackoffOptions = {
  /** Delay cap of the first retry, in ms. */
  baseMs: number;
  /** No retry waits longer than this (unless the provider said so with Retry-After). */
  maxMs: number;
};

/**
 * How long to wait before retry number `attempt` (1-based): exponential backoff with full jitter, i.e. a
 * uniform draw in [0, min(maxMs, baseMs * 2^(attempt-1))] (AWS Architecture Blog, "Exponential Backoff
 * And Jitter"). When the provider sent `Retry-After`, that wait is honoured instead, plus up to 10% of
 * jitter so that clients throttled together do not come back together.
 * @see https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.round(retryAfterMs + retryAfterMs * 0.1 * random());
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** exponent);
  return Math.round(cap * random());
}
