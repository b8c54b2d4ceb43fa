import { type Column, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import type { Db } from "./createDatabase.ts";

/** A database transaction or the database itself: whatever `db.transaction(fn)` hands to `fn`, or `db`. */
export type Executor = Db | Parameters<Parameters<Db["transaction"]>[0]>[0];

export type InsertRowsOptions = {
  /** appended after the SELECT: `on conflict … do nothing` or `do update set …` */
  onConflict?: SQL;
  /** the columns to return, e.g. `sql\`returning "hash"\`` */
  returning?: SQL;
};

/**
 * Insert many rows with one statement and ONE bound parameter: the rows travel as a JSON array that
 * PostgreSQL expands with `json_populate_recordset(null::<table>, $1)` (PostgreSQL 9.3+, PGlite alike).
 *
 * Why not Drizzle's `insert().values(rows)`: it builds a placeholder, a `Param` and a driver mapping for every
 * single value, which costs more CPU than the database spends storing the rows (10,000 transactions with
 * their logs, transfers and address rows: about 60,000 rows and 500,000 values per committed range), and it
 * must be cut in chunks to stay under PostgreSQL's 65,535 parameters. Here the values are converted once by
 * `JSON.stringify` and parsed by PostgreSQL in C.
 *
 * Rows are `$inferInsert` objects of `table` (JS keys, as Drizzle takes them); every row must set the same
 * columns (a column left out of a row is NULL, not its default; columns no row sets get their default).
 * Values: `bigint` is sent as its decimal string (exact for `numeric(78,0)`), `Date` as ISO 8601, objects of
 * `jsonb` columns as JSON, arrays as JSON arrays (PostgreSQL turns them into `text[]`).
 *
 * @returns the rows of `returning` (column names as PostgreSQL returns them), or `[]`.
 */
export async function insertRows<T extends PgTable>(
  db: Executor,
  table: T,
  rows: readonly T["$inferInsert"][],
  options: InsertRowsOptions = {},
): Promise<Record<string, unknown>[]> {
  if (rows.length === 0) return [];
  const columns = setColumns(table, rows);
  // UTF-8 bytes, not a string: both drivers bind a Buffer in binary format, which for json is its text, and
  // copy it as is (a string parameter is measured and encoded again by the driver; PGlite does it in JS).
  const json = Buffer.from(
    JSON.stringify(
      rows.map((row) => {
        const out: Record<string, unknown> = {};
        for (const [key, column] of columns) {
          const value = (row as Record<string, unknown>)[key];
          out[column.name] = typeof value === "bigint" ? value.toString() : value;
        }
        return out;
      }),
    ),
  );
  const names = columnList(columns);
  const statement = sql`insert into ${table} (${names}) select ${names} from json_populate_recordset(null::${table}, ${json}::json)`;
  if (options.onConflict) statement.append(sql` ${options.onConflict}`);
  if (options.returning) statement.append(sql` ${options.returning}`);
  // `.execute()` sends it now (awaiting the query would send it a microtask later): see sendTogether.
  const result = await db.execute<Record<string, unknown>>(statement).execute();
  return result.rows;
}

/**
 * The columns of `table` that at least one of `rows` sets, as [JS key, column] in the table's order: a column
 * no row sets is left out of the statement, so it gets its default.
 */
export function setColumns<T extends PgTable>(
  table: T,
  rows: readonly T["$inferInsert"][],
): [string, Column][] {
  return Object.entries(getTableColumns(table)).filter(([key]) =>
    rows.some((row) => (row as Record<string, unknown>)[key] !== undefined),
  );
}

/** `"a", "b", …`: the column list of an INSERT or COPY. */
export function columnList(columns: readonly (readonly [string, Column])[]): SQL {
  return sql.join(
    columns.map(([, column]) => sql.identifier(column.name)),
    sql`, `,
  );
}
