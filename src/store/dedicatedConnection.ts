import { drizzle as drizzleNodePg } from "drizzle-orm/node-postgres";
import pg from "pg";
import type { Db, PostgresDatabase } from "./createDatabase.ts";
import { DatabaseUnavailableError, scrubDriverError } from "./errors.ts";
import * as schema from "./schema.ts";

/** A PostgreSQL session of its own, outside the pool, for state that lives as long as the session. */
export type DedicatedConnection = {
  client: pg.Client;
  /** Drizzle over this one session (store functions take a `Db`). */
  db: Db;
  /** Resolves once the session is gone (closed by us, by the server, or by the network); never rejects. */
  readonly closed: Promise<void>;
  /** Whether the session has ended or failed. */
  isClosed(): boolean;
  /** End the session (waits at most a second for a clean goodbye, then destroys the socket). Idempotent. */
  close(): Promise<void>;
};

export type DedicatedConnectionOptions = {
  /** `application_name` as `pg_stat_activity` shows it (e.g. `protoscan-writer-lock`). */
  name: string;
  /** Client-side limit of every query (default 10 s): a silently dead peer surfaces as an error. */
  queryTimeoutMs?: number;
};

/**
 * Open a dedicated session on the server of `database` with the pool's connection settings. Sessions that
 * hold a session-level advisory lock or LISTEN must not come from the pool: the lock or the subscription
 * would stay with a pooled connection after release, and a pooled connection can be replaced at any time.
 * TCP keep-alive and a query timeout make a half-open connection (a cut network) end in an error instead of
 * hanging; `closed` then resolves so the owner reacts at once.
 *
 * @throws {DatabaseUnavailableError} when the server cannot be reached (message free of the URL).
 */
export async function openDedicatedConnection(
  database: PostgresDatabase,
  options: DedicatedConnectionOptions,
): Promise<DedicatedConnection> {
  const pool = database.pool.options;
  const client = new pg.Client({
    ...(pool.connectionString === undefined ? {} : { connectionString: pool.connectionString }),
    ...(pool.options === undefined ? {} : { options: pool.options }),
    application_name: options.name,
    connectionTimeoutMillis: 5_000,
    query_timeout: options.queryTimeoutMs ?? 10_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 5_000,
  });
  let ended = false;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  const end = () => {
    ended = true;
    markClosed();
  };
  // An unhandled 'error' on a client would crash the process: a lost session is reported through `closed`.
  client.on("error", end);
  client.on("end", end);
  try {
    await client.connect();
  } catch (error) {
    end();
    await client.end().catch(() => undefined);
    const cause = scrubDriverError(error, database.redact);
    throw new DatabaseUnavailableError(`could not connect to ${database.label}: ${cause.message}`, { cause });
  }
  let closing: Promise<void> | undefined;
  return {
    client,
    db: drizzleNodePg({ client, schema }),
    closed,
    isClosed: () => ended,
    close() {
      closing ??= (async () => {
        if (ended) return;
        const timer = setTimeout(() => destroySocket(client), 1_000);
        try {
          await client.end();
        } catch {
          // already broken
        } finally {
          clearTimeout(timer);
          end();
        }
      })();
      return closing;
    },
  };
}

/** Drop the socket of a client whose `end()` does not return (a cut network). */
function destroySocket(client: pg.Client): void {
  const connection = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection;
  connection?.stream?.destroy();
}
