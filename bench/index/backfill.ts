import { sql } from "drizzle-orm";
import { createChainClient } from "../../src/chain/createChainClient.ts";
import { createIndexer } from "../../src/indexer/createIndexer.ts";
import { createLocalBroadcaster } from "../../src/ingest/broadcaster.ts";
import { createIngest, type Ingest } from "../../src/ingest/createIngest.ts";
import type { Common } from "../../src/internal/common.ts";
import { NonRetryableError } from "../../src/internal/errors.ts";
import { createSilentLogger } from "../../src/internal/logger.ts";
import { createMetrics } from "../../src/internal/metrics.ts";
import { createShutdown } from "../../src/internal/shutdown.ts";
import { createDatabase } from "../../src/store/createDatabase.ts";
import { migrate } from "../../src/store/migrate.ts";
import { benchConfig } from "./benchConfig.ts";
import type { BenchChain } from "./buildChain.ts";
import type { PhaseMeasurement } from "./phaseResult.ts";
import { mainThreadCpuSeconds } from "./threadCpu.ts";

const MB = 1024 * 1024;

/** Sample `process.memoryUsage()` every 50 ms until `stop()`, which returns each figure's peak in MiB. */
function samplePeakMemory(): { stop(): { rss: number; heapUsed: number; external: number } } {
  const peaks = { rss: 0, heapUsed: 0, external: 0 };
  const sample = () => {
    const usage = process.memoryUsage();
    peaks.rss = Math.max(peaks.rss, usage.rss / MB);
    peaks.heapUsed = Math.max(peaks.heapUsed, usage.heapUsed / MB);
    peaks.external = Math.max(peaks.external, usage.external / MB);
  };
  const timer = setInterval(sample, 50);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}

/**
 * Create and migrate a PGlite data directory, as the first start of protoscan on an empty `DATA_DIR` does: a
 * copy of the migrated template `npm install` builds, or without one initdb (PGlite's peak memory) and every
 * migration. Returns the seconds it took.
 */
export async function createDataDir(dataDir: string): Promise<number> {
  const started = performance.now();
  const database = await createDatabase({ dataDir, logger: createSilentLogger() });
  try {
    await migrate(database);
  } finally {
    await database.close();
  }
  return (performance.now() - started) / 1000;
}

/**
 * Phase b/c: protoscan's own backfill of the bench chain, driving the real subsystems as `startProtoscan`
 * wires them (createDatabase + migrate, createChainClient, createIngest, createIndexer) and running polling
 * cycles until the indexer has reached the head. The measured time starts after migrations and includes
 * everything the indexer does: token-mode probes, headers, logs, blocks, receipts, decode, SQL.
 */
export async function backfill(options: {
  chain: BenchChain;
  databaseUrl?: string | undefined;
  dataDir?: string | undefined;
  /**
   * false (the no-store phase): every commit is skipped, so what is measured is fetching, decoding and
   * encoding alone. Nothing is stored and the cursor never moves: the one range of the bench chain is
   * "stored" as soon as its groups are prepared.
   */
  store?: boolean;
}): Promise<PhaseMeasurement> {
  const config = benchConfig(options.chain);
  const logger = createSilentLogger();
  const shutdown = createShutdown();
  const common: Common = { config, logger, metrics: createMetrics(), shutdown };
  const setupStarted = performance.now();
  const database = await createDatabase({
    databaseUrl: options.databaseUrl,
    dataDir: options.dataDir,
    logger,
  });
  shutdown.add(() => database.close());
  try {
    await migrate(database);
    const setupSeconds = (performance.now() - setupStarted) / 1000;

    const openRssMb = process.memoryUsage().rss / MB;
    const memory = samplePeakMemory();
    const started = performance.now();
    const cpu = process.cpuUsage();
    const mainCpu = mainThreadCpuSeconds();
    const chain = createChainClient(common);
    shutdown.add(() => chain.close());
    await chain.assertChainId(config.chain.id);
    const created = await createIngest(common, {
      chain,
      db: database.db,
      broadcaster: createLocalBroadcaster(),
    });
    const ingest: Ingest =
      options.store === false ? { ...created, store: async (prepared) => prepared.decoded } : created;
    const indexer = createIndexer(common, { chain, db: database.db, ingest });
    shutdown.add(() => indexer.stop());
    let stored = 0;
    for (let cycle = 0; ; cycle++) {
      const result = await indexer.runCycle();
      stored += result.stored;
      if (result.ended !== "caught-up") throw new NonRetryableError(`indexer cycle ended ${result.ended}`);
      if (result.indexedBlock >= options.chain.toBlock) break;
      if (cycle > 100) throw new NonRetryableError("indexer did not reach the head in 100 cycles");
    }
    const seconds = (performance.now() - started) / 1000;
    const { user, system } = process.cpuUsage(cpu);
    const mainCpuEnd = mainThreadCpuSeconds();
    const peaks = memory.stop();
    const stats = chain.stats();

    const counts = await database.db.execute<{ transactions: string; logs: string; transfers: string }>(
      sql`select (select count(*) from transactions) as transactions, (select count(*) from logs) as logs,
        (select count(*) from token_transfers) as transfers`,
    );
    const row = counts.rows[0];
    if (!row || Number(row.transactions) !== (options.store === false ? 0 : stored)) {
      throw new NonRetryableError(`stored ${stored} transactions but the table holds ${row?.transactions}`);
    }
    return {
      transactions: stored,
      seconds,
      cpuSeconds: (user + system) / 1e6,
      mainThreadCpuSeconds: mainCpu === null || mainCpuEnd === null ? null : mainCpuEnd - mainCpu,
      requests: stats.requests,
      computeUnits: stats.computeUnits,
      setupSeconds,
      notes: `${row.logs} logs, ${row.transfers} transfers; ${database.label}; RSS ${openRssMb.toFixed(0)} MB once the database was open, peaks while indexing (main thread, sampled): RSS ${peaks.rss.toFixed(0)} MB, JS heap used ${peaks.heapUsed.toFixed(0)} MB, external ${peaks.external.toFixed(0)} MB`,
    };
  } finally {
    await shutdown.kill();
  }
}
