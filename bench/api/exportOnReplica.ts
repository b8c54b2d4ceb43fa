import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { START_ENV } from "../../scripts/nodeFlags.js";
import type { ConfigFile } from "../../src/config/schema.ts";
import { findFreePort } from "../../src/demo/anvil.ts";
import { writeDemoConfig } from "../../src/demo/demoConfig.ts";
import { spawnProtoscan } from "../../test/helpers/processes.ts";
import { processTreeRssMb } from "../_shared/processTreeRss.ts";
import { type ExportMeasure, measureExport } from "./measureExport.ts";

/**
 * The CSV export measured on a server of its own: `protoscan start --role api` (a read replica, started with
 * the Node options and environment of `npm start`) on the benchmark's PostgreSQL database, its RSS read from
 * /proc while it streams. The benchmark's own process holds the seeding and the load generator's results, so
 * only a separate server gives the peak a user's server reaches (issue 20: under 300 MB).
 */
export async function measureExportOnReplica(options: {
  databaseUrl: string;
  configFile: ConfigFile;
  path: string;
}): Promise<ExportMeasure> {
  const dir = await mkdtemp(join(tmpdir(), "protoscan-bench-replica-"));
  const configPath = join(dir, "protoscan.config.yaml");
  await writeDemoConfig(configPath, options.configFile);
  const env: Record<string, string> = Object.fromEntries(START_ENV.map((entry) => entry.split("=", 2)));
  const server = spawnProtoscan(["start", "--role", "api"], {
    ...env,
    PROTOSCAN_CONFIG: configPath,
    DATABASE_URL: options.databaseUrl,
    HOST: "127.0.0.1",
    PORT: String(await findFreePort()),
    // "protoscan is listening" is logged at info, and the one request of the measurement with it.
    LOG_LEVEL: "info",
  });
  try {
    const origin = await server.listening(120_000);
    return await measureExport(origin, options.path, () => processTreeRssMb(server.pid));
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
