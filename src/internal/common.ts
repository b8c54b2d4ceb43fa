import type { Config } from "../config/schema.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";
import type { Shutdown } from "./shutdown.ts";

/**
 * What every subsystem receives instead of importing singletons (Ponder `internal/common.ts`).
 * Only `src/cli/` builds one from the real environment; tests build their own.
 */
export type Common = {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  shutdown: Shutdown;
};
