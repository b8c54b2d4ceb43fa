import { type ChainClient, createChainClient } from "../../src/chain/createChainClient.ts";
import type { Config } from "../../src/config/schema.ts";
import { createIndexer, type Indexer } from "../../src/indexer/createIndexer.ts";
import { type Broadcaster, createLocalBroadcaster, type IngestEvent } from "../../src/ingest/broadcaster.ts";
import { createIngest, type Ingest } from "../../src/ingest/createIngest.ts";
import type { Common } from "../../src/internal/common.ts";
import { createSilentLogger, type Logger } from "../../src/internal/logger.ts";
import { createMetrics } from "../../src/internal/metrics.ts";
import { createShutdown } from "../../src/internal/shutdown.ts";
import type { Database } from "../../src/store/createDatabase.ts";

export type TestPipeline = {
  common: Common;
  chain: ChainClient;
  ingest: Ingest;
  indexer: Indexer;
  /** every event the ingest pipeline broadcast, in order */
  events: IngestEvent[];
  /** the pipeline's broadcaster, to give an app as `events` (its read caches are emptied by them) */
  broadcaster: Broadcaster;
  /** run polling cycles until the indexer has reached the head it saw (at most `maxCycles`) */
  catchUp(maxCycles?: number): Promise<number>;
  close(): Promise<void>;
};

/** protoscan's indexing subsystems wired as `startProtoscan` wires them, without HTTP, for tests. */
export async function createTestPipeline(options: {
  config: Config;
  database: Database;
  logger?: Logger;
  /** the indexer's `deferIndexesMinBlocks` (default: its own) */
  deferIndexesMinBlocks?: number;
}): Promise<TestPipeline> {
  const shutdown = createShutdown();
  const common: Common = {
    config: options.config,
    logger: options.logger ?? createSilentLogger(),
    metrics: createMetrics(),
    shutdown,
  };
  const chain = createChainClient(common, { baseDelayMs: 20, maxDelayMs: 200 });
  const broadcaster = createLocalBroadcaster();
  const events: IngestEvent[] = [];
  broadcaster.subscribe((event) => events.push(event));
  const ingest = await createIngest(common, { chain, db: options.database.db, broadcaster });
  const indexer = createIndexer(common, {
    chain,
    db: options.database.db,
    ingest,
    ...(options.deferIndexesMinBlocks === undefined
      ? {}
      : { deferIndexesMinBlocks: options.deferIndexesMinBlocks }),
  });
  return {
    common,
    chain,
    ingest,
    indexer,
    events,
    broadcaster,
    async catchUp(maxCycles = 50) {
      for (let i = 0; i < maxCycles; i++) {
        const result = await indexer.runCycle();
        if (result.ended === "caught-up" && result.indexedBlock >= result.target) return result.indexedBlock;
      }
      throw new Error(`indexer did not catch up in ${maxCycles} cycles`);
    },
    async close() {
      await indexer.stop();
      await shutdown.kill();
      chain.close();
    },
  };
}
