import { sql } from "drizzle-orm";
import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import { sleep } from "../internal/sleep.ts";
import type { PostgresDatabase } from "./createDatabase.ts";
import { type DedicatedConnection, openDedicatedConnection } from "./dedicatedConnection.ts";

/**
 * The session-level advisory lock that elects the single active writer ("writer!!" in ASCII; distinct from
 * `MIGRATION_LOCK_KEY` and `OUTBOX_LOCK_KEY`).
 */
export const WRITER_LOCK_KEY = 0x7772697465722121n;

/** What runs while the lock is held: started on election, stopped when the lock is lost or released. */
export type Leader = {
  start(): Promise<void> | void;
  stop(): Promise<void>;
};

export type WriterLockOptions = {
  /** How often a standby asks for the lock, and the wait after a failed connection (default 1 s). */
  retryMs: number;
  /** How often the holder checks its lock session answers (default 1 s). */
  checkMs: number;
  /** Client-side limit of the session's queries: a half-open session is found dead within it (default 5 s). */
  queryTimeoutMs: number;
  key: bigint;
};

export const DEFAULT_WRITER_LOCK_OPTIONS: WriterLockOptions = {
  retryMs: 1_000,
  checkMs: 1_000,
  queryTimeoutMs: 5_000,
  key: WRITER_LOCK_KEY,
};

export type WriterLockStatus = {
  /** this process holds the lock (its writers run) */
  held: boolean;
  /** when it was taken, while held */
  since: Date | null;
  /** whether the lock session is connected (a standby whose database is down is not) */
  connected: boolean;
};

/**
 * Single active writer election (SPEC §9) through a PostgreSQL session-level advisory lock, taken on a
 * connection of its own (never a pooled one). A standby asks for the lock every `retryMs`. The holder
 * checks its session every `checkMs`; when the session ends (the server restarted, the network was cut, the
 * backend was terminated) the lock is already gone on the server, so the holder stops its writers at once
 * and campaigns again. When the holder's process dies, its session ends with it and a standby takes over
 * within about `retryMs`.
 *
 * The writers resume from what is committed (the polling cursor is advanced in the same database
 * transaction as the data it covers), so a takeover leaves no gap and stores nothing twice. A short overlap
 * (an old holder that has not yet noticed its session is gone) is harmless for the same reason: inserts are
 * idempotent and balance deltas apply only to rows actually inserted.
 */
export type WriterLock = {
  /**
   * Start campaigning. Resolves after the first attempt: the leader has started if the lock was free, else
   * this process is a standby (or the database is unreachable) and keeps trying in the background.
   */
  start(): Promise<void>;
  /** Stop the leader if it runs, release the lock and stop campaigning. */
  stop(): Promise<void>;
  status(): WriterLockStatus;
};

export function createWriterLock(
  common: Common,
  deps: { database: PostgresDatabase; leader: Leader; options?: Partial<WriterLockOptions> },
): WriterLock {
  const options: WriterLockOptions = { ...DEFAULT_WRITER_LOCK_OPTIONS, ...deps.options };
  const logger = common.logger.child({ subsystem: "writer-lock" });
  const { metrics } = common;
  const stopping = new AbortController();
  const status: WriterLockStatus = { held: false, since: null, connected: false };
  metrics.writerLockHeld.set(0);
  let loop: Promise<void> | undefined;
  let firstAttempt!: () => void;
  const firstAttemptDone = new Promise<void>((resolve) => {
    firstAttempt = resolve;
  });

  const tryLock = async (connection: DedicatedConnection): Promise<boolean> => {
    const result = await connection.db.execute<{ locked: boolean }>(
      sql`select pg_try_advisory_lock(${options.key.toString()}::bigint) as locked`,
    );
    return result.rows[0]?.locked === true;
  };

  /** Lead until the session is lost or we are stopped. */
  const lead = async (connection: DedicatedConnection) => {
    status.held = true;
    status.since = new Date();
    metrics.writerLockHeld.set(1);
    metrics.writerLockChanges.inc({ event: "acquired" });
    logger.info("writer lock acquired: this process is the active writer");
    try {
      try {
        await deps.leader.start();
      } finally {
        firstAttempt();
      }
      while (!stopping.signal.aborted) {
        const outcome = await Promise.race([
          connection.closed.then(() => "lost" as const),
          wait(options.checkMs, stopping.signal).then(() => "check" as const),
        ]);
        if (outcome === "lost" || stopping.signal.aborted) break;
        await connection.client.query("select 1");
      }
    } catch (error) {
      if (!stopping.signal.aborted) {
        logger.warn({ err: errorMessage(error) }, "active writer: the lock session or the writers failed");
      }
    } finally {
      const lost = !stopping.signal.aborted;
      status.held = false;
      status.since = null;
      metrics.writerLockHeld.set(0);
      if (lost) {
        metrics.writerLockChanges.inc({ event: "lost" });
        logger.warn("writer lock lost: stopping the writers, then campaigning again");
      }
      await deps.leader.stop().catch((error: unknown) => {
        logger.error({ err: errorMessage(error) }, "writers did not stop cleanly");
      });
    }
  };

  const campaign = async () => {
    let announcedStandby = false;
    while (!stopping.signal.aborted) {
      let connection: DedicatedConnection | undefined;
      try {
        connection = await openDedicatedConnection(deps.database, {
          name: "protoscan-writer-lock",
          queryTimeoutMs: options.queryTimeoutMs,
        });
        status.connected = true;
        while (!stopping.signal.aborted && !connection.isClosed()) {
          if (await tryLock(connection)) {
            announcedStandby = false;
            await lead(connection);
            break;
          }
          if (!announcedStandby) {
            logger.info("writer lock held by another process: standing by");
            announcedStandby = true;
          }
          firstAttempt();
          await Promise.race([connection.closed, wait(options.retryMs, stopping.signal)]);
        }
      } catch (error) {
        if (!stopping.signal.aborted) {
          logger.warn({ err: errorMessage(error) }, "writer lock: database unavailable, retrying");
        }
      } finally {
        status.connected = false;
        // Ending the session releases the lock if it was held.
        await connection?.close();
      }
      firstAttempt();
      await wait(options.retryMs, stopping.signal);
    }
  };

  return {
    start() {
      loop ??= campaign();
      return firstAttemptDone;
    },
    async stop() {
      stopping.abort();
      firstAttempt();
      await loop;
    },
    status: () => ({ ...status }),
  };
}

/** Wait `ms`, or less when `signal` aborts (the only way `sleep` rejects). */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, signal).catch(() => {});
}
