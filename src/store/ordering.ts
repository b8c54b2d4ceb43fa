import { type AnyColumn, type SQL, sql } from "drizzle-orm";

/**
 * `ORDER BY <block> DESC NULLS LAST, <index> DESC NULLS LAST`: exactly the order of the `… DESC NULLS LAST`
 * indexes drizzle-kit creates. A plain `DESC` means `NULLS FIRST` to PostgreSQL, which cannot walk those
 * indexes in order (NOT NULL columns notwithstanding) and falls back to sorting every matching row.
 */
export function newestFirst(block: AnyColumn, index: AnyColumn): SQL[] {
  return [sql`${block} desc nulls last`, sql`${index} desc nulls last`];
}
