import type { Config } from "../../config/schema.ts";
import type { Common } from "../../internal/common.ts";
import { createSilentLogger, type Logger } from "../../internal/logger.ts";
import { createMetrics } from "../../internal/metrics.ts";
import { createShutdown } from "../../internal/shutdown.ts";

/** A minimal resolved Config for chain tests. */
export function testConfig(rpc: Partial<Config["rpc"]> & { urls: string[] }, chainId = 31337): Config {
  return {
    path: null,
    chain: { id: chainId, name: "anvil" },
    rpc: { batchSize: 100, timeoutMs: 10_000, ...rpc },
    indexer: { pollIntervalSeconds: 300, logChunkBlocks: 5000, startBlock: 0, confirmations: 0 },
    api: { corsOrigins: ["*"], rateLimitPerMinute: 600, trackTxApiKeys: [], etherscanApiKeys: [] },
    webhooks: {},
    prices: { cacheSeconds: 300 },
    protocols: [],
    tokens: [],
  };
}

/** A Common for chain tests: silent logger unless one is given, fresh metrics and shutdown. */
export function testCommon(config: Config, logger: Logger = createSilentLogger()): Common {
  return { config, logger, metrics: createMetrics(), shutdown: createShutdown() };
}
