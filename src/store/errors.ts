import { DrizzleQueryError } from "drizzle-orm/errors";
import { NonRetryableError, RetryableError } from "../internal/errors.ts";

/**
 * The database could not be reached or dropped the connection (refused, timed out, authentication, too many
 * clients, server shutting down). Retryable: the same call may succeed once the database is back.
 */
export class DatabaseUnavailableError extends RetryableError {
  override name = "DatabaseUnavailableError";
}

/** A migration failed to apply (bad SQL, a conflicting object): running it again will not help. */
export class MigrationError extends NonRetryableError {
  override name = "MigrationError";
}

/**
 * A commit brought a block header whose number is stored under another hash: one of the two blocks was
 * orphaned by a reorg. Overwriting the stored header would hide the transactions stored under it from every
 * later reorg check, so nothing is committed; the indexer rolls back whichever block is orphaned, and the
 * commit is retried (polling: as a reorg of its range; webhooks and track-tx: `ReorgDetectedError`).
 */
export class BlockHashConflictError extends RetryableError {
  override name = "BlockHashConflictError";
  readonly blockNumber: number;

  constructor(blockNumber: number, stored: string, given: string) {
    super(`block ${blockNumber} is stored under another hash`, {
      details: `stored ${stored}, given ${given}`,
    });
    this.blockNumber = blockNumber;
  }
}

/**
 * A polling commit found blocks stored in the span it covers that it cannot vouch for: stored under another
 * hash than the one it brings, or not brought at all and not read from the chain yet (a webhook or track-tx
 * commit stored them ahead of the cursor). Nothing is committed; the indexer reads those blocks from the
 * chain, rolls back the orphaned ones and commits again (indexer/indexRange.ts).
 */
export class StoredBlocksUnverifiedError extends RetryableError {
  override name = "StoredBlocksUnverifiedError";
  readonly blocks: readonly { number: number; hash: string }[];

  constructor(blocks: readonly { number: number; hash: string }[]) {
    super(`blocks ${blocks.map((b) => b.number).join(", ")} are stored but not verified against the chain`);
    this.blocks = blocks;
  }
}

/** The driver error behind Drizzle's `DrizzleQueryError` wrapper (whose message is the whole query). */
export function driverErrorOf(error: unknown): unknown {
  let current = error;
  while (current instanceof DrizzleQueryError && current.cause !== undefined) current = current.cause;
  return current;
}

/**
 * Whether a driver error means "the database is not reachable right now" rather than "this statement is wrong".
 * Node socket errors carry an `E…` code; PostgreSQL uses SQLSTATE classes 08 (connection exception),
 * 53 (insufficient resources: too many connections), 57P (operator intervention: shutdown) and
 * 28 (invalid authorization). node-postgres reports a dropped socket without a code.
 */
export function isConnectionError(error: unknown): boolean {
  const driverError = driverErrorOf(error);
  if (typeof driverError !== "object" || driverError === null) return false;
  const { code, message } = driverError as { code?: unknown; message?: unknown };
  if (typeof code === "string") {
    if (/^E[A-Z]+$/.test(code)) return true;
    if (/^(08|53|28|57P)/.test(code)) return true;
  }
  if (typeof message === "string") {
    return /Connection terminated|connection timeout|timeout expired|PGlite is closed|Client was closed/i.test(
      message,
    );
  }
  return false;
}

/**
 * Whether PostgreSQL aborted a transaction because of concurrent ones: to break a deadlock (SQLSTATE 40P01)
 * or on a serialization failure (40001). Nothing of it was applied; running it again resolves it.
 * @see https://www.postgresql.org/docs/current/mvcc-serialization-failure-handling.html
 */
export function isTransactionConflict(error: unknown): boolean {
  const code = codeOf(error);
  return code === "40P01" || code === "40001";
}

/** Whether a statement failed on a unique index or primary key (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return codeOf(error) === "23505";
}

/**
 * Whether a statement failed for a passing reason rather than for what it asked: the database is not
 * reachable, PostgreSQL aborted it for a conflict with concurrent transactions, or it ran past the statement
 * timeout (SQLSTATE 57014). The API answers these 503 `UPSTREAM_UNAVAILABLE` ("try again shortly"), not 500.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  return isConnectionError(error) || isTransactionConflict(error) || codeOf(error) === "57014";
}

/** The `code` of the driver error behind `error` (a SQLSTATE, or a Node socket code), if it has one. */
function codeOf(error: unknown): unknown {
  const driverError = driverErrorOf(error);
  return typeof driverError === "object" && driverError !== null
    ? (driverError as { code?: unknown }).code
    : undefined;
}

/**
 * Copy of a driver error that is safe to keep as a `cause`: its message goes through `redact` (see
 * `Database.redact`) and
 * only credential-free fields are kept (`code`, `severity`). Node's `TypeError: Invalid URL` carries the whole
 * URL in `input`, and pg errors may quote the user name, so the original object is never kept.
 */
export function scrubDriverError(error: unknown, redact: (text: string) => string): Error {
  const driverError = driverErrorOf(error);
  const message = driverError instanceof Error ? driverError.message : String(driverError);
  const safe = new Error(redact(message));
  safe.name = driverError instanceof Error ? driverError.name : "Error";
  if (typeof driverError === "object" && driverError !== null) {
    const { code, severity } = driverError as { code?: unknown; severity?: unknown };
    if (typeof code === "string") Object.assign(safe, { code });
    if (typeof severity === "string") Object.assign(safe, { severity });
  }
  // The original stack repeats the unscrubbed message on its first line.
  safe.stack = `${safe.name}: ${safe.message}`;
  return safe;
}
