import { classifyRpcError } from "../chain/classifyRpcError.ts";
import { RateLimitedError, RetryableChainError } from "../chain/errors.ts";
import { type BackoffOptions, backoffDelay } from "../internal/backoffDelay.ts";
import { errorMessage, NonRetryableError } from "../internal/errors.ts";
import type { Logger } from "../internal/logger.ts";
import { sleep } from "../internal/sleep.ts";

/** Backoff between start-up attempts: up to 1 s doubling to 30 s, with the chain client's jitter (tests shorten it). */
const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1_000, maxMs: 30_000 };

/**
 * Run a start-up call to the node (the chain id check, the check that the store belongs to this chain) until
 * the node answers it. A rate limit, a transient failure or data not yet available is logged and retried
 * after a backoff, as the indexer's cycles do, instead of failing the start: a node that is briefly down or
 * over its quota delays protoscan instead of crash-looping it under its supervisor. An answer that cannot
 * change by waiting (a wrong chain id, refused credentials, a database from another chain) fails at once.
 * When `signal` aborts (SIGTERM or Ctrl-C during the start-up), the wait ends with its reason: a node that
 * does not answer never holds a stop.
 */
export async function untilNodeAnswers<T>(
  logger: Logger,
  what: string,
  call: () => Promise<T>,
  options: {
    /** DEFAULT_BACKOFF unless given (tests shorten it) */
    backoff?: BackoffOptions;
    /** the jitter's source (tests fix it) */
    random?: () => number;
    signal?: AbortSignal | undefined;
  } = {},
): Promise<T> {
  const { backoff = DEFAULT_BACKOFF, random = Math.random, signal } = options;
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await call();
    } catch (error) {
      if (error instanceof NonRetryableError) throw error;
      const classified = classifyRpcError(error);
      if (!(classified instanceof RetryableChainError)) throw error;
      const retryAfterMs = classified instanceof RateLimitedError ? classified.retryAfterMs : undefined;
      const waitMs = backoffDelay(attempt + 1, backoff, retryAfterMs, random);
      logger.warn(
        { err: errorMessage(classified), attempt: attempt + 1, retryInMs: waitMs },
        `start-up: the node did not answer ${what}; retrying`,
      );
      await sleep(waitMs, signal);
    }
  }
}
