import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { createSilentLogger, type Logger } from "../../src/internal/logger.ts";
import { createDatabase, type Database } from "../../src/store/createDatabase.ts";
import { migrate } from "../../src/store/migrate.ts";

export type TestDatabase = {
  database: Database;
  /** On PostgreSQL, the URL of this test database (for a child process to connect to); unset on PGlite. */
  url?: string;
  /** Close the database; on PostgreSQL also drop the test database. Idempotent. */
  cleanup(): Promise<void>;
};

/**
 * The PostgreSQL server tests run against, from `DATABASE_URL` (e.g. `postgres://postgres@127.0.0.1:5432/test`);
 * undefined means embedded PGlite. Tests may read the environment; `src/` may not.
 */
export function testDatabaseUrl(): string | undefined {
  const url = process.env.DATABASE_URL;
  return url === undefined || url === "" ? undefined : url;
}

/**
 * A fresh, isolated, migrated database for one test file or test: in-memory PGlite by default, or a new
 * `protoscan_test_<random>` database on the `DATABASE_URL` server, dropped by `cleanup`.
 * Pass `migrate: false` for an empty database (migration tests).
 */
export async function createTestDatabase(
  options: { migrate?: boolean; logger?: Logger } = {},
): Promise<TestDatabase> {
  const logger = options.logger ?? createSilentLogger();
  const serverUrl = testDatabaseUrl();
  if (serverUrl === undefined) {
    if (options.migrate === false) {
      const database = await createDatabase({ dataDir: "memory://", logger, pgliteTemplate: false });
      return { database, cleanup: () => database.close() };
    }
    const pgliteSnapshot = await migratedSnapshot();
    const database = await createDatabase({ dataDir: "memory://", logger, pgliteSnapshot });
    return { database, cleanup: () => database.close() };
  }

  const name = `protoscan_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(serverUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let cleaning: Promise<void> | undefined;
  const dropIt = async () => {
    await adminQuery(
      serverUrl,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`,
    );
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  };
  let database: Database;
  try {
    database = await createDatabase({ databaseUrl: url.toString(), logger, poolSize: 5 });
  } catch (error) {
    await dropIt();
    throw error;
  }
  const cleanup = () => {
    cleaning ??= (async () => {
      await database.close();
      await dropIt();
    })();
    return cleaning;
  };
  if (options.migrate !== false) {
    try {
      await migrate(database);
    } catch (error) {
      await cleanup();
      throw error;
    }
  }
  return { database, url: url.toString(), cleanup };
}

/**
 * A fresh database for the tests of the enclosing `describe` (or file): created before the first, cleaned up
 * after the last. Returns the TestDatabase, filled in once `beforeAll` has run, so tests read `db.database`.
 */
export function useTestDatabase(): TestDatabase {
  const db = {} as TestDatabase;
  beforeAll(async () => {
    Object.assign(db, await createTestDatabase());
  });
  afterAll(async () => {
    await db.cleanup?.();
  });
  return db;
}

let snapshot: Promise<Blob> | undefined;

/**
 * A migrated PGlite cluster, built once per test worker (from the template `npm install` builds, when it is
 * current): loading it is ~3x faster than initdb + migrate.
 */
function migratedSnapshot(): Promise<Blob> {
  snapshot ??= (async () => {
    const database = await createDatabase({ dataDir: "memory://", logger: createSilentLogger() });
    if (database.kind !== "pglite") throw new Error("expected PGlite");
    try {
      await migrate(database);
      return await database.client.dumpDataDir("none");
    } finally {
      await database.close();
    }
  })();
  snapshot.catch(() => {
    snapshot = undefined;
  });
  return snapshot;
}

/** One statement on the server's maintenance connection (CREATE/DROP DATABASE cannot run in a pool's tx). */
async function adminQuery(serverUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl, application_name: "protoscan-test" });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
