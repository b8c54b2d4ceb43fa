import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { findFreePort } from "../../src/demo/anvil.ts";
import { demoConfigFile, writeDemoConfig } from "../../src/demo/demoConfig.ts";
import type { DemoDeployment } from "../../src/demo/deploy.ts";
import { type CliProcess, spawnProtoscan } from "../../test/helpers/processes.ts";

const PROFILE_PRELOAD = fileURLToPath(new URL("./cpuProfilePreload.mjs", import.meta.url));

/** The signing key of the benchmark's Alchemy webhook (a local sender signs with it). */
export const BENCH_ALCHEMY_KEY = "whsec_protoscan_bench_realtime";

export type BenchProtoscan = {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `ws://127.0.0.1:<port>/ws` */
  wsUrl: string;
  process: CliProcess;
  configPath: string;
  /** Ask it to stop (SIGTERM), wait up to 15 s, then SIGKILL. */
  stop(): Promise<void>;
};

/**
 * Write the demo config for `deployment` into `dir` with what the benchmark needs, and start
 * `node bin/protoscan.js start` (role all) as a child process, so it has a CPU of its own to compete for:
 *
 * - `indexer.pollIntervalSeconds: 1` (issue 5 item 4);
 * - `webhooks.alchemy.signingKeys` so that `POST /api/webhooks/alchemy` is served;
 * - `api.rateLimitPerMinute: 1,000,000`: every benchmark client connects from 127.0.0.1, and the WebSocket
 *   upgrades of 1,000 clients go through the per-IP rate limit like any route.
 *
 * The database is PGlite in `dir/pglite` unless `databaseUrl` is given. Resolves once it listens.
 */
export async function startBenchProtoscan(options: {
  deployment: DemoDeployment;
  rpcUrl: string;
  dir: string;
  databaseUrl?: string;
  logLevel?: string;
  /** write a V8 CPU profile of the protoscan process into this directory when it exits (`--cpu-prof`) */
  cpuProfileDir?: string;
}): Promise<BenchProtoscan> {
  const file = demoConfigFile(options.deployment, { rpcUrl: options.rpcUrl, pollIntervalSeconds: 1 });
  file.webhooks = { alchemy: { signingKeys: [BENCH_ALCHEMY_KEY] } };
  file.api = { ...file.api, rateLimitPerMinute: 1_000_000 };
  const configPath = join(options.dir, "protoscan.config.yaml");
  await writeDemoConfig(configPath, file);
  const port = await findFreePort();
  const env: Record<string, string> = {
    PROTOSCAN_CONFIG: configPath,
    HOST: "127.0.0.1",
    PORT: String(port),
    LOG_LEVEL: options.logLevel ?? "info",
  };
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl;
  else env.DATA_DIR = join(options.dir, "pglite");
  if (options.cpuProfileDir) {
    // node refuses --cpu-prof in NODE_OPTIONS; a preloaded module profiles through the inspector instead.
    mkdirSync(options.cpuProfileDir, { recursive: true });
    env.NODE_OPTIONS = `--import=${pathToFileURL(PROFILE_PRELOAD).href}`;
    env.PROTOSCAN_BENCH_CPU_PROFILE_DIR = options.cpuProfileDir;
  }
  const child = spawnProtoscan(["start"], env);
  try {
    const url = await child.listening(120_000);
    return {
      url,
      wsUrl: `${url.replace(/^http/, "ws")}/ws`,
      process: child,
      configPath,
      async stop() {
        child.signal("SIGTERM");
        await child.waitForExit(15_000).catch(() => undefined);
      },
    };
  } catch (error) {
    await child.stop();
    throw error;
  }
}
