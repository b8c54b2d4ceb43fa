import { sql } from "drizzle-orm";
import type { Database } from "./createDatabase.ts";
import { DatabaseUnavailableError, scrubDriverError } from "./errors.ts";

/**
 * Check the database answers `select 1` within `timeoutMs` (default 2 s), for `GET /readyz` (SPEC §4).
 * A pool that cannot get a connection would otherwise wait for its own 10 s connect timeout.
 *
 * @throws {DatabaseUnavailableError} with a message free of the database URL.
 */
export async function pingDatabase(database: Database, options: { timeoutMs?: number } = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 2_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DatabaseUnavailableError(`${database.label} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    const result = await Promise.race([database.db.execute<{ ok: number }>(sql`select 1 as ok`), timeout]);
    if (result.rows[0]?.ok !== 1) {
      throw new DatabaseUnavailableError(`${database.label} answered select 1 with an unexpected row`);
    }
  } catch (error) {
    if (error instanceof DatabaseUnavailableError) throw error;
    const cause = scrubDriverError(error, database.redact);
    throw new DatabaseUnavailableError(`${database.label} is unreachable: ${cause.message}`, {
      cause,
    });
  } finally {
    clearTimeout(timer);
  }
}
