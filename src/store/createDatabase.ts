import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import type { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzleNodePg } from "drizzle-orm/node-postgres";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import pg from "pg";
import type { Logger } from "../internal/logger.ts";
import { redactSecrets, redactUrl, secretsOfUrl } from "../internal/redact.ts";
import { createPgliteThread, type PgliteClient } from "./createPgliteThread.ts";
import { DATA_DIR_LOCK_FILE, type DataDirLock, lockDataDir } from "./dataDirLock.ts";
import { DatabaseUnavailableError, scrubDriverError } from "./errors.ts";
import {
  copyPgliteTemplate,
  findPgliteTemplate,
  PGLITE_TEMPLATE_CACHE,
  type PgliteTemplate,
} from "./pgliteTemplate.ts";
import * as schema from "./schema.ts";

export type Schema = typeof schema;

/**
 * The result of `db.execute(sql…)` on either driver: node-postgres' `QueryResult` and PGlite's `Results` both
 * carry `rows`, and that is all code outside this file may rely on.
 */
export interface DbQueryResultHKT extends PgQueryResultHKT {
  readonly type: DbQueryResult<this["row"]>;
}

/** What `db.execute<Row>(sql…)` resolves to on both drivers. */
export type DbQueryResult<Row> = {
  rows: (Row extends Record<string, unknown> ? Row : Record<string, unknown>)[];
};

/** The Drizzle database every query module takes: PGlite and node-postgres both satisfy it. */
export type Db = PgDatabase<DbQueryResultHKT, Schema>;

type DatabaseBase = {
  db: Db;
  /** Where the data lives, safe to log: `pglite:memory://`, `pglite:/abs/data`, or the redacted URL. */
  label: string;
  /** Remove the database URL and its credentials from a free-form message (driver errors quote them). */
  redact(text: string): string;
  /** Close every connection. Idempotent. */
  close(): Promise<void>;
};

/**
 * Embedded PostgreSQL (PGlite) in a worker thread of this process (`createPgliteThread`): one connection, no
 * other process may open `dataDir`.
 */
export type EmbeddedDatabase = DatabaseBase & { kind: "pglite"; client: PgliteClient; dataDir: string };

/** A PostgreSQL server through a node-postgres pool (LISTEN/NOTIFY and advisory locks take a pool client). */
export type PostgresDatabase = DatabaseBase & { kind: "postgres"; pool: pg.Pool };

export type Database = EmbeddedDatabase | PostgresDatabase;

export type CreateDatabaseOptions = {
  /** `postgres://…` selects PostgreSQL; unset selects PGlite. */
  databaseUrl?: string | undefined;
  /** PGlite's directory (created when missing) or `memory://` (the default) for none. */
  dataDir?: string | undefined;
  logger: Logger;
  /** PostgreSQL pool size (default 10). */
  poolSize?: number | undefined;
  /**
   * PGlite only: start from this `dumpDataDir()` tarball instead of an empty cluster (test helpers reuse one
   * migrated snapshot: loading it takes a third of the time of initdb + migrate).
   */
  pgliteSnapshot?: Blob | undefined;
  /**
   * PGlite only: where the migrated templates a new database starts from are (default
   * `PGLITE_TEMPLATE_CACHE`, built by `npm install`), or false to create every new database with initdb.
   * Unused when `pgliteSnapshot` is given or the data directory holds a database already.
   */
  pgliteTemplate?: string | false | undefined;
};

const MEMORY = "memory://";

/**
 * PostgreSQL settings PGlite starts with on a data directory on disk. Not for `memory://`, whose files live in
 * the process: there the small pool made reads and writes slower.
 *
 * - `shared_buffers=8MB` (docs/performance.md, "Memory"): an 8 MB buffer pool instead of 128 MB, which PGlite's
 *   WebAssembly memory holds once touched (-115 MB of RSS at 16 MB). Pages outside it come from the OS page
 *   cache: seeding 100,000 transactions and the API's cold reads measured the same at 16 MB as with 128 MB,
 *   and a first start through 20,000 transactions took as long at 8 MB as at 16, with 8 MB less memory
 *   (PGlite's memory 33-34 → 25-26 MB resident).
 * - `wal_init_zero=off`: a new 16 MB WAL segment gets its size from its last byte instead of 16 MB of zeros
 *   written through PGlite's file system on the database thread (a 10,000-transaction backfill wrote 50 MB of
 *   them, a fifth of all it wrote; docs/performance.md, "Indexer backfill"). Recovery does not need the
 *   zeros: it stops at the first WAL record whose checksum fails, and the unwritten part reads as zeros.
 */
const DISK_PGLITE_SETTINGS: readonly string[] = ["shared_buffers=8MB", "wal_init_zero=off"];

/**
 * Open the database protoscan stores into (SPEC §1 `DATABASE_URL` / `DATA_DIR`) and check it answers.
 *
 * Both drivers return the same JS values for the same SQL types, so code tested on PGlite behaves the same on
 * PostgreSQL: `int8` as a decimal string (Drizzle columns map it to number/bigint), `numeric` as a string,
 * `jsonb` parsed, `timestamptz` a Date through Drizzle columns and PostgreSQL's text
 * (`2026-11-21 08:00:00.123+00`, sessions run in UTC) in raw `db.execute` rows.
 *
 * @throws {DatabaseUnavailableError} when the server cannot be reached; the message never holds the URL.
 */
export async function createDatabase(options: CreateDatabaseOptions): Promise<Database> {
  return options.databaseUrl === undefined || options.databaseUrl === ""
    ? openPglite(options.dataDir ?? MEMORY, options.pgliteSnapshot, options.pgliteTemplate, options.logger)
    : openPostgres(options.databaseUrl, options.poolSize ?? 10, options.logger);
}

async function openPglite(
  dataDir: string,
  givenSnapshot: Blob | undefined,
  templates: string | false | undefined,
  logger: Logger,
): Promise<EmbeddedDatabase> {
  let snapshot = givenSnapshot;
  let dir = dataDir;
  let prepared: PreparedDataDir | undefined;
  let lock: DataDirLock | undefined;
  const onDisk = !dir.startsWith(MEMORY);
  if (onDisk) {
    dir = dir.startsWith("file://") ? fileURLToPath(dir) : path.resolve(dir);
    // One process per directory (PGlite cannot tell): locked before anything in it is read or written.
    await mkdir(dir, { recursive: true });
    lock = await lockDataDir(dir);
    prepared = await prepareDataDir(dir, logger).catch(async (error: unknown) => {
      await lock?.release();
      throw error;
    });
  }
  const settings = onDisk ? DISK_PGLITE_SETTINGS : [];
  // A new database starts from the migrated template when there is one for these migrations: no initdb, no
  // migrations, and on disk not even PostgreSQL (docs/operations.md, "A new database").
  let template: PgliteTemplate | undefined;
  const fresh = onDisk ? prepared?.fresh === true : true;
  if (fresh && snapshot === undefined && templates !== false) {
    template = await findPgliteTemplate(templates ?? PGLITE_TEMPLATE_CACHE, logger);
  }
  let client: PgliteClient;
  try {
    const started = performance.now();
    // A new directory is copied from the template while PGlite's WebAssembly is compiled and its worker
    // thread starts (createPgliteThread's `after`): the worker opens the directory once the copy is complete.
    let copying: Promise<void> | undefined;
    if (template && onDisk) copying = copyPgliteTemplate(template, dir);
    else if (template) snapshot = new Blob([gunzipSync(await readFile(template.tarball))]);
    if (prepared?.fresh && !template) {
      // Creating a database (initdb) takes PGlite's WebAssembly memory to 800-900 MB, which a worker keeps
      // for its life: a worker of its own creates it and is ended, and a fresh one opens it. A first start
      // then runs at about the size of later ones instead of twice it (docs/performance.md, "Memory").
      const creator = await createPgliteThread({ dataDir: dir, settings, snapshot });
      await creator.close();
    }
    client = await createPgliteThread({
      dataDir: dir,
      settings,
      snapshot: prepared?.fresh ? undefined : snapshot,
      after: copying,
    });
    await prepared?.created();
    if (template) {
      const ms = Math.round(performance.now() - started);
      logger.info({ template: template.dir, ms }, "database created from the template");
    }
  } catch (error) {
    await lock?.release();
    throw new DatabaseUnavailableError(`could not open PGlite in ${dir}`, {
      cause: scrubDriverError(error, (text) => text),
    });
  }
  // Drizzle's PGlite driver only calls what PgliteClient implements (query, transaction).
  const db: Db = drizzlePglite({ client: client as unknown as PGlite, schema });
  let closing: Promise<void> | undefined;
  const label = `pglite:${dir}`;
  logger.info({ database: label }, "database opened");
  return {
    kind: "pglite",
    db,
    client,
    dataDir: dir,
    label,
    redact: (text) => text,
    close() {
      closing ??= (client.closed ? Promise.resolve() : client.close()).finally(() => lock?.release());
      return closing;
    },
  };
}

/**
 * Present in a PGlite data directory while a new database is being created in it. PGlite runs initdb in memory,
 * then writes the files into the directory, PG_VERSION before the configuration files, and from then on takes
 * the directory for an existing database: a process killed in between (kill -9, OOM) would leave a directory
 * that never opens again. The marker tells the next start those files are the remains of an interrupted
 * creation.
 */
const CREATING_MARKER = ".protoscan-creating";

/** A data directory ready to open. */
type PreparedDataDir = {
  /** a new database is to be created in it */
  fresh: boolean;
  /** call once PGlite has opened the directory */
  created(): Promise<void>;
};

/**
 * Create `dir` if needed and make a new database's creation restartable: an empty directory gets the marker,
 * a marked one is emptied (everything in it came from the interrupted creation) and created again.
 */
async function prepareDataDir(dir: string, logger: Logger): Promise<PreparedDataDir> {
  await mkdir(dir, { recursive: true });
  const marker = path.join(dir, CREATING_MARKER);
  const entries = (await readdir(dir)).filter((entry) => entry !== DATA_DIR_LOCK_FILE);
  if (entries.includes(CREATING_MARKER)) {
    logger.warn({ dataDir: dir }, "the database was not fully created by the last start: creating it again");
    for (const entry of entries) {
      if (entry !== CREATING_MARKER) await rm(path.join(dir, entry), { recursive: true, force: true });
    }
  } else if (entries.length > 0) {
    return { fresh: false, created: async () => undefined }; // an existing database
  } else {
    await writeFile(marker, "");
  }
  return { fresh: true, created: () => rm(marker, { force: true }) };
}

async function openPostgres(
  databaseUrl: string,
  poolSize: number,
  logger: Logger,
): Promise<PostgresDatabase> {
  const secrets = secretsOfUrl(databaseUrl).sort((a, b) => b.length - a.length);
  const label = redactUrl(databaseUrl);
  const redact = (text: string) => redactSecrets(text, secrets);
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: poolSize,
    application_name: "protoscan",
    statement_timeout: 30_000,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // timestamptz rendered the same on every server, whatever its TimeZone setting.
    options: "-c TimeZone=UTC",
    // Statements a caller sends before the previous ones are answered (`sendTogether`: a commit's headers,
    // rows, balances and cursor) go out at once instead of waiting in node-postgres' queue for each answer.
    // That queue is deprecated and goes in pg@9 ("Calling client.query() when the client is already executing
    // a query"); pipeline mode is its replacement. Each statement still has its own Sync: inside a
    // transaction, those after a failed one fail with "current transaction is aborted", as before.
    pipeline: true,
  });
  // An idle client whose server went away emits on the pool; unhandled it would crash the process.
  pool.on("error", (error) => {
    logger.warn({ database: label, err: scrubDriverError(error, redact) }, "idle database connection failed");
  });
  // A checked-out client has no listener of the pool's: when its connection drops between two statements
  // of a transaction (a database outage mid-commit), its 'error' event would crash the process. The
  // statements in flight fail anyway, and the pool discards the broken client when it is released.
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
  });
  try {
    await pool.query("select 1");
  } catch (error) {
    await pool.end().catch(() => undefined);
    const cause = scrubDriverError(error, redact);
    throw new DatabaseUnavailableError(`could not connect to PostgreSQL at ${label}: ${cause.message}`, {
      cause,
    });
  }
  const db: Db = drizzleNodePg({ client: pool, schema });
  let closing: Promise<void> | undefined;
  logger.info({ database: label }, "database connected");
  return {
    kind: "postgres",
    db,
    pool,
    label,
    redact,
    close() {
      closing ??= pool.end();
      return closing;
    },
  };
}
