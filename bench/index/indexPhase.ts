/**
 * One phase of `npm run bench:index`, in its own process so that its peak RSS is its own:
 *
 *   node --import tsx bench/index/indexPhase.ts --phase <floor|pglite-disk|pglite-memory|postgres|no-store>
 *     --chain <chain.json> --out <result.json> [--data-dir <dir>] [--floor-concurrency N] [--create-only]
 *
 * `--create-only` (pglite-disk, no-store): create and migrate the PGlite data directory, then exit; the
 * backfill runs in a second process on the existing directory, as after a restart. The postgres phase reads
 * the (fresh) database's URL from `DATABASE_URL`, never from argv. Writes a `PhaseResult` (or a
 * `CreateResult`) to --out.
 */
import { writeFile } from "node:fs/promises";
import { NonRetryableError } from "../../src/internal/errors.ts";
import { tuneV8 } from "../../src/internal/tuneV8.ts";
import { PHASE_NAMES, type PhaseName } from "./benchArgs.ts";
import { benchConfig } from "./benchConfig.ts";
import { readBenchChain } from "./buildChain.ts";
import type { PhaseMeasurement, PhaseResult } from "./phaseResult.ts";

const flags = new Map<string, string>();
for (let i = 2; i < process.argv.length; i++) {
  const flag = process.argv[i]!;
  const value = process.argv[i + 1];
  if (value === undefined || value.startsWith("--")) flags.set(flag, "");
  else {
    flags.set(flag, value);
    i++;
  }
}
const required = (name: string) => {
  const value = flags.get(name);
  if (!value) throw new NonRetryableError(`indexPhase: ${name} is required`);
  return value;
};
/** maxRSS is in kilobytes (getrusage ru_maxrss on Linux). */
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

const phase = required("--phase") as PhaseName;
if (!PHASE_NAMES.includes(phase)) throw new NonRetryableError(`indexPhase: unknown phase ${phase}`);
// protoscan's phases run with the V8 settings `protoscan start` runs with (and bench/index.ts starts them with
// its Node options, NODE_FLAGS); the floor with Node's defaults, at its fastest.
if (phase !== "floor") tuneV8();
const out = required("--out");

if (flags.has("--create-only")) {
  const { createDataDir } = await import("./backfill.ts");
  const seconds = await createDataDir(required("--data-dir"));
  await writeFile(out, JSON.stringify({ seconds, peakRssMb: peakRssMb() }));
  process.exit(0);
}

const chain = await readBenchChain(required("--chain"));
let measured: PhaseMeasurement;
// Each phase loads only what it runs (the floor never loads PGlite, Drizzle or node-postgres).
if (phase === "floor") {
  const { fetchFloor } = await import("./fetchFloor.ts");
  const { scannedAddresses } = await import("../../src/indexer/createIndexer.ts");
  const { createSilentLogger } = await import("../../src/internal/logger.ts");
  const { createMetrics } = await import("../../src/internal/metrics.ts");
  const { createShutdown } = await import("../../src/internal/shutdown.ts");
  const config = benchConfig(chain);
  const common = {
    config,
    logger: createSilentLogger(),
    metrics: createMetrics(),
    shutdown: createShutdown(),
  };
  measured = await fetchFloor({
    chain,
    addresses: scannedAddresses(common),
    logChunkBlocks: config.indexer.logChunkBlocks,
    batchSize: config.rpc.batchSize,
    concurrency: Number(flags.get("--floor-concurrency") || 200),
  });
} else {
  const { backfill } = await import("./backfill.ts");
  if (phase === "pglite-disk") measured = await backfill({ chain, dataDir: required("--data-dir") });
  else if (phase === "pglite-memory") measured = await backfill({ chain, dataDir: "memory://" });
  else if (phase === "no-store") {
    measured = await backfill({ chain, dataDir: required("--data-dir"), store: false });
  } else {
    const databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl) throw new NonRetryableError("indexPhase: the postgres phase needs DATABASE_URL");
    measured = await backfill({ chain, databaseUrl });
  }
}

const result: PhaseResult = { ...measured, phase, peakRssMb: peakRssMb() };
await writeFile(out, JSON.stringify(result));
