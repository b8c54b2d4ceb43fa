import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import type { PriceEngine } from "./createPriceEngine.ts";

/** Keeps the `prices` table warm: every tracked token looked up again every `prices.cacheSeconds`. */
export type PriceRefresher = {
  /** First refresh now, then one every `cacheSeconds` (none when it is 0: nothing is cached). */
  start(): void;
  /** Stop the timer and wait for a refresh in progress. Idempotent. */
  stop(): Promise<void>;
  /** One refresh now (also what the timer runs). Never throws. */
  refresh(): Promise<void>;
};

/**
 * The periodic price refresh of the indexer role (issue 6): API processes then find fresh prices in the
 * table instead of asking the upstream on a request. Refreshes never overlap; a slow one delays the next.
 */
export function createPriceRefresher(common: Common, deps: { prices: PriceEngine }): PriceRefresher {
  const logger = common.logger.child({ module: "prices" });
  const intervalMs = common.config.prices.cacheSeconds * 1000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const refresh = async () => {
    try {
      const prices = await deps.prices.refreshAll();
      const priced = [...prices.values()].filter((p) => p !== null).length;
      logger.debug({ tokens: prices.size, priced }, "prices refreshed");
    } catch (error) {
      logger.warn({ error: errorMessage(error) }, "price refresh failed");
    }
  };

  // Fixed rate: the next refresh is due `cacheSeconds` after this one started, so stored prices are
  // replaced about when they expire, however long the lookups took.
  const tick = () => {
    const startedAt = Date.now();
    running = refresh().finally(() => {
      running = undefined;
      if (stopped || intervalMs <= 0) return;
      timer = setTimeout(tick, Math.max(0, intervalMs - (Date.now() - startedAt)));
      timer.unref();
    });
  };

  return {
    start() {
      if (stopped || running || timer || common.config.tokens.length === 0) return;
      tick();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
    refresh,
  };
}
