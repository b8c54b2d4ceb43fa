import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { findFreePort } from "../../src/demo/anvil.ts";
import { demoConfigFile, writeDemoConfig } from "../../src/demo/demoConfig.ts";
import type { StartPhaseName } from "./benchArgs.ts";
import type { BenchChain } from "./buildChain.ts";
import { spawnMeasured, statusOf } from "./measuredTree.ts";

/** What a user meets on a first `npm start`: one run of the start phases of `npm run bench:index`. */
export type StartResult = {
  phase: StartPhaseName;
  /** from spawning `npm start` to the first `GET /healthz` 200 */
  healthzSeconds: number;
  /** from spawning `npm start` to `/api/stats` showing the chain's last block indexed */
  indexedSeconds: number;
  /** `totalTransactions` of `/api/stats` then */
  transactions: number;
  /** the highest sum of the RSS of npm, its shell and protoscan in MiB, sampled from /proc every 50 ms */
  peakTreeRssMb: number;
  /** with `--rounds`: the `indexedSeconds` of every round (this result is the median one) */
  rounds?: number[];
};

/**
 * Start protoscan as a user does, `npm start` in the repository (through npm, with the Node options of
 * package.json), on an empty database: a new PGlite `DATA_DIR` under `dir`, or the fresh PostgreSQL
 * database `databaseUrl`. It indexes the bench chain from its demo config; measured until it has indexed
 * the chain's last block, then stopped with SIGTERM.
 */
export async function measureCliStart(options: {
  chain: BenchChain;
  repoRoot: string;
  dir: string;
  databaseUrl?: string;
}): Promise<StartResult> {
  const { chain } = options;
  await mkdir(options.dir, { recursive: true });
  const configPath = join(options.dir, "protoscan.config.yaml");
  const file = demoConfigFile(chain.deployment, { rpcUrl: chain.rpcUrl, pollIntervalSeconds: 1 });
  await writeDemoConfig(configPath, file);
  const port = await findFreePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PROTOSCAN_CONFIG: configPath,
    DATA_DIR: join(options.dir, "data"),
    HOST: "127.0.0.1",
    PORT: String(port),
    LOG_LEVEL: "warn",
  };
  delete env.DATABASE_URL;
  delete env.NODE_OPTIONS;
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl;
  const npm = spawnMeasured("npm start", "npm", ["start", "--silent"], {
    cwd: options.repoRoot,
    env,
    log: join(options.dir, "npm-start.log"),
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    const healthzSeconds = await npm.until(async () =>
      (await statusOf(`${base}/healthz`)) === 200 ? npm.elapsed() : undefined,
    );
    let transactions = 0;
    const indexedSeconds = await npm.until(async () => {
      const response = await fetch(`${base}/api/stats`);
      const stats = (await response.json()) as {
        totalTransactions?: number;
        indexer?: { indexedBlock?: number | null };
      };
      transactions = stats.totalTransactions ?? 0;
      return (stats.indexer?.indexedBlock ?? -1) >= chain.toBlock ? npm.elapsed() : undefined;
    });
    // The totals of /api/stats follow the commits' change notices (on PostgreSQL through the fan-out),
    // which may come a moment after the cursor moved: read them again until they show every generated one
    // (PostgreSQL showed 4,654 of 5,054 at the moment the cursor reached the head).
    const settled = Date.now() + 3_000;
    while (transactions < chain.generated && Date.now() < settled) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const response = await fetch(`${base}/api/stats`);
      transactions = ((await response.json()) as { totalTransactions?: number }).totalTransactions ?? 0;
    }
    npm.sample();
    return {
      phase: options.databaseUrl ? "start-postgres" : "start-pglite",
      healthzSeconds,
      indexedSeconds,
      transactions,
      peakTreeRssMb: npm.peakMb(),
    };
  } finally {
    await npm.stop();
  }
}
