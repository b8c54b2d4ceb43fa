import { sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { retryConflicts } from "./retryConflicts.ts";
import { sendTogether } from "./sendTogether.ts";

/** A database transaction of ingested data, as `ingestTransaction` hands it to its write. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/**
 * Transaction-level advisory lock taken first by every commit and rollback of ingested data ("ingest!!" in
 * ASCII; distinct from the writer, migration and outbox keys). On PostgreSQL, a rollback (removeBlocks) and a
 * track-tx or webhook commit from another connection could otherwise interleave statement by statement
 * under READ COMMITTED: the rollback would delete rows committed after it computed its balance deltas (the
 * fault simulation's seed 12 left a delta-mode balance off by one transfer). Holding this lock, the ingest
 * writes of all processes run one after another; it is released at commit or rollback. On PGlite (one
 * connection) it costs one statement.
 */
export const INGEST_LOCK_KEY = 0x696e676573742121n;

/**
 * Run `write` as one database transaction of ingested data: holding INGEST_LOCK_KEY, and run again when
 * PostgreSQL aborts it for a conflict with a concurrent writer (polling, rollbacks, track-tx floods and the
 * inbox worker can deadlock on rows outside the lock, such as balances). With `unlimited`, the connection's
 * statement timeout is lifted before the lock is waited for (a deferred index build may hold it for minutes).
 */
export function ingestTransaction<T>(
  db: Db,
  write: (tx: Tx) => Promise<T>,
  options: { unlimited?: boolean } = {},
): Promise<T> {
  return retryConflicts(() =>
    db.transaction(async (tx) => {
      if (options.unlimited) await tx.execute(sql`set local statement_timeout = 0`);
      // The write's first statements follow the lock's without waiting for its answer: they run once it is
      // held, and fail with it if it fails.
      const [, result] = await sendTogether(
        () => tx.execute(sql`select pg_advisory_xact_lock(${INGEST_LOCK_KEY.toString()}::bigint)`).execute(),
        () => write(tx),
      );
      return result;
    }),
  );
}
