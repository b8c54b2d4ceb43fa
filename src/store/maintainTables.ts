import { sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";

export type MaintainTablesOptions = {
  /** vacuum and analyze a table once it has grown by this share since the last time (default 0.2) */
  growth?: number;
  /** tables smaller than this many 8 KiB pages are left alone (default 32: planning them is cheap anyway) */
  minPages?: number;
};

export type MaintainedTable = {
  table: string;
  /** pages now */
  pages: number;
  /** pages when it was last vacuumed or analyzed (0: never) */
  pagesBefore: number;
};

/**
 * Do for PGlite what PostgreSQL's autovacuum does on a server: `VACUUM (ANALYZE)` every table of the schema
 * that has grown by `growth` since it was last vacuumed or analyzed (or never was), and return them.
 *
 * PGlite runs PostgreSQL as a single-user backend: there is no autovacuum launcher, so nothing ever gathers
 * planner statistics or sets the visibility map. Without statistics the planner guesses a table's rows (e.g.
 * 163 DEMO holders where there are 50,000) and picks plans that read every matching row and sort them: the
 * holders page at offset 5,000 took 160 ms instead of 4 ms on the benchmark's data (docs/performance.md,
 * "API benchmark"). Without the visibility map no index-only scan avoids the heap. Updated counter rows
 * (`token_stats`, `protocol_stats`, `token_balances`) also leave dead tuples that only VACUUM reclaims.
 *
 * Growth is measured in pages against `pg_class.relpages`, which VACUUM and ANALYZE set (PGlite keeps no
 * cumulative statistics such as `n_mod_since_analyze` across statements): inserts and dead tuples both grow
 * it. On a single PGlite connection each VACUUM holds the database for its duration (seconds after a large
 * backfill, then in proportion to what was added since), so the caller runs this from time to time, not on
 * a request path. On PostgreSQL, leave it to autovacuum.
 */
export async function maintainTables(
  db: Db,
  options: MaintainTablesOptions = {},
): Promise<MaintainedTable[]> {
  const growth = options.growth ?? 0.2;
  const minPages = options.minPages ?? 32;
  const result = await db.execute<{ table: string; pages: string; pages_before: number }>(sql`
    select c.relname as "table",
      pg_relation_size(c.oid) / current_setting('block_size')::int as pages,
      c.relpages as pages_before
    from pg_class c
    where c.relkind = 'r' and c.relnamespace = current_schema()::regnamespace
    order by c.relname`);
  const due = result.rows
    .map((row) => ({ table: row.table, pages: Number(row.pages), pagesBefore: Number(row.pages_before) }))
    .filter((t) => t.pages >= minPages && t.pages > t.pagesBefore * (1 + growth));
  for (const t of due) await db.execute(sql`vacuum (analyze) ${sql.identifier(t.table)}`);
  return due;
}
