import type { Database } from "../../src/store/createDatabase.ts";

/** One statement as a store function sent it to the driver. */
export type CapturedQuery = { text: string; params: unknown[] };
type Queryable = { query: (...args: unknown[]) => Promise<{ rows: Record<string, unknown>[] }> };

const driverOf = (database: Database) =>
  (database.kind === "pglite" ? database.client : database.pool) as unknown as Queryable;

/** The SQL and parameters `run` sends, read at the driver (PGlite client or pg pool), in order. */
export async function captureQueries(
  database: Database,
  run: () => Promise<unknown>,
): Promise<CapturedQuery[]> {
  const client = driverOf(database);
  const original = client.query;
  const captured: CapturedQuery[] = [];
  client.query = (...args: unknown[]) => {
    const [first, second] = args;
    if (typeof first === "string") captured.push({ text: first, params: (second as unknown[]) ?? [] });
    else {
      const q = first as { text: string; values?: unknown[] };
      captured.push({ text: q.text, params: (second as unknown[] | undefined) ?? q.values ?? [] });
    }
    return original.apply(client, args);
  };
  try {
    await run();
  } finally {
    client.query = original;
  }
  return captured;
}

/** `EXPLAIN` of a captured statement, one plan line per line. */
export async function explainQuery(database: Database, query: CapturedQuery): Promise<string> {
  const result = await driverOf(database).query(`explain ${query.text}`, query.params);
  return result.rows.map((row) => String(row["QUERY PLAN"])).join("\n");
}
