import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Logger } from "../../src/internal/logger.ts";
import { createDatabase, type Database } from "../../src/store/createDatabase.ts";
import { migrate } from "../../src/store/migrate.ts";

export type BenchDatabase = {
  database: Database;
  /** what was measured, for the report: `PGlite memory://`, `PGlite on disk (<dir>)`, `PostgreSQL 15.x` */
  description: string;
  /** on PostgreSQL, the benchmark database's URL (another process may open it); null on PGlite */
  url: string | null;
  /** close it; on PostgreSQL also drop the benchmark's database */
  cleanup(): Promise<void>;
};

/**
 * A fresh, migrated database for the benchmark: a new `protoscan_bench_<random>` database on the server of
 * `serverUrl` when given (dropped by `cleanup`), else PGlite in `dataDir` (default `memory://`).
 */
export async function openBenchDatabase(options: {
  serverUrl?: string | undefined;
  dataDir?: string | undefined;
  logger: Logger;
}): Promise<BenchDatabase> {
  if (!options.serverUrl) {
    const dataDir = options.dataDir ?? "memory://";
    const database = await createDatabase({ dataDir, logger: options.logger });
    await migrate(database);
    const where = dataDir === "memory://" ? "memory://" : `on disk (${dataDir})`;
    return { database, description: `PGlite ${where}`, url: null, cleanup: () => database.close() };
  }
  const name = `protoscan_bench_${randomBytes(4).toString("hex")}`;
  await admin(options.serverUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(options.serverUrl);
  url.pathname = `/${name}`;
  const drop = () => admin(options.serverUrl!, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  let database: Database;
  try {
    database = await createDatabase({ databaseUrl: url.toString(), logger: options.logger });
    await migrate(database);
  } catch (error) {
    await drop();
    throw error;
  }
  const version = await admin(options.serverUrl, "SHOW server_version");
  return {
    database,
    description: `PostgreSQL ${version} (fresh database ${name}, pool of 10)`,
    url: url.toString(),
    async cleanup() {
      await database.close();
      await drop();
    },
  };
}

/** One statement on a connection of its own (CREATE/DROP DATABASE cannot run in a pool's transaction). */
async function admin(serverUrl: string, text: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl, application_name: "protoscan-bench" });
  await client.connect();
  try {
    const result = await client.query<Record<string, unknown>>(text);
    return String(Object.values(result.rows[0] ?? {})[0] ?? "");
  } finally {
    await client.end();
  }
}
