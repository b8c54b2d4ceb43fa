import { type Column, type SQL, sql } from "drizzle-orm";

/**
 * `column = any($1::type[])`: the values bound as one array parameter. Drizzle's `inArray` binds one
 * parameter per value, and a commit's lookup of its 1,000 hashes was 1,000 placeholders to build on the event
 * loop, to bind, and to parse and plan in the database (docs/performance.md, "Indexer backfill"). Both
 * drivers send a JS array as a PostgreSQL array, quoting its elements.
 */
export function equalsAny(column: Column, values: readonly (string | number)[], type: "text" | "int8"): SQL {
  return sql`${column} = any(${sql.param(values)}::${sql.raw(type)}[])`;
}
