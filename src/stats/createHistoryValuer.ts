import { createBackgroundLoop } from "../internal/backgroundLoop.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import type { TimeSeries } from "./createTimeSeries.ts";

/** Buckets valued per pass; passes follow each other until none is left, then wait `IDLE_MS`. */
const PASS_BUCKETS = 200;
/** The wait between two looks at the roll-ups once everything is valued (commits make new stale buckets). */
export const HISTORY_VALUER_IDLE_MS = 30_000;

export type HistoryValuer = {
  start(): void;
  /** Stop and wait for the pass in progress. Final. */
  stop(): Promise<void>;
};

/**
 * The writer's background valuation of history volumes (docs/api.md "History"): bucket volumes that commits,
 * reorgs or price history made stale are computed and cached (`history_volumes`) before anyone asks, so that
 * the protocol page's first request reads them instead of valuing up to every stored transaction. It values
 * exactly what a request would (the same `TimeSeries`, the same revision rule: a value computed from data
 * older than the bucket's revision is never served), and it waits while the indexer catches up (`busy`), so
 * that a backfill is not slowed by valuing buckets its next commit makes stale again.
 */
export function createHistoryValuer(
  common: Common,
  deps: { timeSeries: Pick<TimeSeries, "valueStale">; busy?: () => boolean },
): HistoryValuer {
  const logger = common.logger.child({ module: "history" });
  const loop = createBackgroundLoop(common.shutdown);
  return {
    start() {
      loop.start(async (signal) => {
        while (!signal.aborted) {
          let valued = 0;
          if (!deps.busy?.()) {
            try {
              valued = await deps.timeSeries.valueStale(PASS_BUCKETS);
            } catch (error) {
              logger.warn({ error: errorMessage(error) }, "history volumes not valued");
            }
          }
          if (valued < PASS_BUCKETS) await loop.pause(HISTORY_VALUER_IDLE_MS);
        }
      });
    },
    stop: () => loop.stop(),
  };
}
