import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { findFreePort } from "../../src/demo/anvil.ts";
import { demoConfigFile, writeDemoConfig } from "../../src/demo/demoConfig.ts";
import { NonRetryableError } from "../../src/internal/errors.ts";
import { processTreeRssMb } from "../_shared/processTreeRss.ts";
import type { StartPhaseName } from "./benchArgs.ts";
import type { BenchChain } from "./buildChain.ts";

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

const SAMPLE_MS = 50;
const POLL_MS = 20;
const TIMEOUT_MS = 300_000;

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
  const started = performance.now();
  const npm = spawn("npm", ["start", "--silent"], {
    cwd: options.repoRoot,
    env,
    stdio: ["ignore", "ignore", "inherit"],
    detached: true,
  });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    npm.once("exit", () => {
      exited = true;
      resolve();
    }),
  );
  let peak = 0;
  const sample = () => {
    if (npm.pid !== undefined && !exited) peak = Math.max(peak, processTreeRssMb(npm.pid));
  };
  sample();
  const sampler = setInterval(sample, SAMPLE_MS);
  const base = `http://127.0.0.1:${port}`;
  const elapsed = () => (performance.now() - started) / 1000;
  try {
    const healthzSeconds = await until(
      async () => {
        const response = await fetch(`${base}/healthz`).catch(() => null);
        await response?.arrayBuffer();
        return response?.status === 200 ? elapsed() : undefined;
      },
      () => exited,
    );
    let transactions = 0;
    const indexedSeconds = await until(
      async () => {
        const response = await fetch(`${base}/api/stats`);
        const stats = (await response.json()) as {
          totalTransactions?: number;
          indexer?: { indexedBlock?: number | null };
        };
        transactions = stats.totalTransactions ?? 0;
        return (stats.indexer?.indexedBlock ?? -1) >= chain.toBlock ? elapsed() : undefined;
      },
      () => exited,
    );
    // The totals of /api/stats follow the commits' change notices (on PostgreSQL through the fan-out),
    // which may come a moment after the cursor moved: read them again until they show every generated one
    // (PostgreSQL showed 4,654 of 5,054 at the moment the cursor reached the head).
    const settled = Date.now() + 3_000;
    while (transactions < chain.generated && Date.now() < settled && !exited) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const response = await fetch(`${base}/api/stats`);
      transactions = ((await response.json()) as { totalTransactions?: number }).totalTransactions ?? 0;
    }
    sample();
    return {
      phase: options.databaseUrl ? "start-postgres" : "start-pglite",
      healthzSeconds,
      indexedSeconds,
      transactions,
      peakTreeRssMb: peak,
    };
  } finally {
    clearInterval(sampler);
    // The whole group (npm, its shell, protoscan): npm alone would leave protoscan to finish on its own.
    if (!exited && npm.pid !== undefined) process.kill(-npm.pid, "SIGTERM");
    await exit;
    // npm exits at once; protoscan closes its database after it. Wait for the group to be empty, so that the
    // caller may remove the data directory.
    const deadline = Date.now() + 15_000;
    while (npm.pid !== undefined && groupAlive(npm.pid) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Whether any process of the process group `pgid` is still running. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Poll `check` every POLL_MS until it returns a value; throws when `gone()` or after TIMEOUT_MS. */
async function until<T>(check: () => Promise<T | undefined>, gone: () => boolean): Promise<T> {
  const deadline = Date.now() + TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (gone()) throw new NonRetryableError("npm start exited before the measurement ended");
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new NonRetryableError(`npm start did not get there within ${TIMEOUT_MS / 1000} s`);
}
