import { type Column, is, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import { PgliteDatabase, PgliteTransaction } from "drizzle-orm/pglite";
import { columnList, type Executor, setColumns } from "./insertRows.ts";

/**
 * Whether `db` stores through PGlite, where `copyRows` works (a `COPY … FROM` whose data PGlite reads from a
 * Blob; node-postgres has no such channel).
 */
export function canCopyRows(db: Executor): boolean {
  return is(db, PgliteTransaction) || is(db, PgliteDatabase);
}

/**
 * Insert many rows with `COPY <table> (<columns>) FROM …` in PostgreSQL's text format, PGlite only
 * (`canCopyRows`). The statement is written `copy … from $1` with the rows' bytes as its one parameter; the
 * PGlite thread's client (createPgliteThread.ts) hands them to its worker, which puts them in a file for
 * PGlite's `COPY … FROM '<file>'`.
 *
 * Why: COPY stores a batch of rows page by page (one WAL record per page, not per row) and parses a text
 * line per row, where `insertRows` parses JSON into records and inserts them one at a time. A backfill's four
 * big statements took 2.1 s of PGlite's worker instead of 3.0 s (docs/performance.md, "Indexer backfill").
 *
 * COPY has no `ON CONFLICT`: a row whose key is stored already fails the whole statement (SQLSTATE 23505).
 * Callers copy only rows they know to be new, and fall back to `insertRows` when that fails.
 *
 * Rows are `$inferInsert` objects of `table`, as for `insertRows`: a column no row sets gets its default, a
 * column some rows leave out is NULL in those.
 */
export async function copyRows<T extends PgTable>(
  db: Executor,
  table: T,
  rows: readonly T["$inferInsert"][],
): Promise<void> {
  await copyEncoded(db, encodeCopy(table, rows));
}

/** Rows of one table in COPY's text format, with the columns they set: what `copyEncoded` sends. */
export type EncodedCopy = { table: PgTable; columns: [string, Column][]; data: Buffer };

/**
 * `copyRows` in two steps, so that the rows can be encoded ahead of the statement (the polling indexer encodes
 * a group while the previous one is stored): `encodeCopy` turns the rows into COPY's text (null for none),
 * `copyEncoded` sends it.
 */
export function encodeCopy<T extends PgTable>(
  table: T,
  rows: readonly T["$inferInsert"][],
): EncodedCopy | null {
  if (rows.length === 0) return null;
  const columns = setColumns(table, rows);
  return { table, columns, data: copyBytes(columns, rows as readonly Record<string, unknown>[]) };
}

export async function copyEncoded(db: Executor, encoded: EncodedCopy | null): Promise<void> {
  if (encoded === null) return;
  const { table, columns, data } = encoded;
  // `.execute()` sends it now (awaiting the query would send it a microtask later): see sendTogether.
  await db.execute(sql`copy ${table} (${columnList(columns)}) from ${data}`).execute();
}

/**
 * The rows in COPY's text format, as UTF-8 bytes: one line per row, values separated by tabs, NULL as `\N`.
 * Each line is written to the bytes as soon as it is made, so that a table's text is not also held as a list
 * of strings until a final join (which, with the bytes made from it, was the event loop's largest allocation
 * in a backfill's profile).
 */
export function copyBytes(
  columns: readonly (readonly [string, Column])[],
  rows: readonly Record<string, unknown>[],
): Buffer {
  let length = 0;
  for (const row of rows) {
    let line = "";
    for (let i = 0; i < columns.length; i++) {
      const [key, column] = columns[i]!;
      if (i > 0) line += "\t";
      line += copyValue(row[key], column);
    }
    line += "\n";
    // A UTF-8 character takes at most 3 bytes per UTF-16 unit.
    if (length + line.length * 3 > scratch.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(scratch.length * 2, length + line.length * 3));
      scratch.copy(grown, 0, 0, length);
      scratch = grown;
    }
    length += scratch.write(line, length);
  }
  // Exactly the bytes written, in memory of their own: a view (or a small Buffer from Node's shared pool) would
  // carry the rest of its memory to the database thread with it.
  const exact = Buffer.allocUnsafeSlow(length);
  scratch.copy(exact, 0, 0, length);
  return exact;
}

/**
 * Where `copyBytes` writes, kept from one call to the next (calls are synchronous): as large as the largest
 * table of a group, instead of a buffer allocated and grown per table and group.
 */
let scratch = Buffer.allocUnsafeSlow(64 * 1024);

function copyValue(value: unknown, column: Column): string {
  if (value === null || value === undefined) return "\\N";
  if (column.dataType === "json") return escapeText(JSON.stringify(value));
  switch (typeof value) {
    case "string":
      return escapeText(value);
    // Digits, a sign, `true`/`false`: nothing to escape, so nothing to test.
    case "bigint":
    case "number":
    case "boolean":
      return String(value);
  }
  if (Array.isArray(value)) return escapeText(arrayLiteral(value));
  if (value instanceof Date) return value.toISOString();
  return escapeText(String(value));
}

/** A PostgreSQL array literal of text elements: `{"a","b"}`, NULL for null elements. */
function arrayLiteral(values: readonly unknown[]): string {
  let literal = "{";
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) literal += ",";
    if (v === null || v === undefined) literal += "NULL";
    else {
      // Only a quote or a backslash needs one before it (hashes and hex data have neither).
      const text = String(v);
      literal += `"${QUOTED.test(text) ? text.replace(/["\\]/g, "\\$&") : text}"`;
    }
  }
  return `${literal}}`;
}

const QUOTED = /["\\]/;

const SPECIAL = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };

/** COPY's text format gives backslash, tab, newline and carriage return a meaning: escape them. */
function escapeText(text: string): string {
  return SPECIAL.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : text;
}
