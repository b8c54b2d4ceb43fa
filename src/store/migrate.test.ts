import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { afterEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../../test/helpers/db.ts";
import { createSilentLogger } from "../internal/logger.ts";
import { createDatabase, type Database } from "./createDatabase.ts";
import { MIGRATIONS_FOLDER, migrate, pendingMigrations } from "./migrate.ts";
import * as schema from "./schema.ts";

const journal = JSON.parse(readFileSync(path.join(MIGRATIONS_FOLDER, "meta/_journal.json"), "utf8")) as {
  entries: { tag: string }[];
};
const migrationCount = journal.entries.length;

const schemaTables = Object.values(schema).flatMap((value) =>
  value instanceof PgTable ? [getTableConfig(value)] : [],
);

let open: TestDatabase[] = [];
async function emptyDatabase(): Promise<Database> {
  const test = await createTestDatabase({ migrate: false });
  open.push(test);
  return test.database;
}

afterEach(async () => {
  await Promise.all(open.map((test) => test.cleanup()));
  open = [];
});

async function tableNames(database: Database): Promise<string[]> {
  const result = await database.db.execute<{ name: string }>(
    sql`select table_name as name from information_schema.tables where table_schema = 'public' order by 1`,
  );
  return result.rows.map((row) => row.name);
}

async function indexNames(database: Database): Promise<string[]> {
  const result = await database.db.execute<{ name: string }>(
    sql`select indexname as name from pg_indexes where schemaname = 'public' order by 1`,
  );
  return result.rows.map((row) => row.name);
}

describe("migrate", () => {
  test("default", async () => {
    const database = await emptyDatabase();
    expect(await tableNames(database)).toEqual([]);

    expect(await migrate(database)).toEqual({ applied: migrationCount });

    const tables = await tableNames(database);
    expect(tables).toEqual(schemaTables.map((table) => table.name).sort());
    const indexes = await indexNames(database);
    for (const table of schemaTables) {
      for (const index of table.indexes) expect(indexes).toContain(index.config.name);
    }
  });

  test("behavior: every column of schema.ts exists with its nullability", async () => {
    const database = await emptyDatabase();
    await migrate(database);
    const result = await database.db.execute<{ table: string; column: string; nullable: string }>(
      sql`select table_name as "table", column_name as "column", is_nullable as nullable
          from information_schema.columns where table_schema = 'public'`,
    );
    const actual = new Set(result.rows.map((row) => `${row.table}.${row.column}:${row.nullable}`));
    for (const table of schemaTables) {
      for (const column of table.columns) {
        expect(actual).toContain(`${table.name}.${column.name}:${column.notNull ? "NO" : "YES"}`);
      }
    }
  });

  test("behavior: running twice is a no-op", async () => {
    const database = await emptyDatabase();
    await migrate(database);
    await database.db.insert(schema.prices).values({
      tokenAddress: "0x0000000000000000000000000000000000000001",
      priceUsd: 1.25,
      source: "static",
      priceAt: new Date("2026-01-02T03:04:05.678Z"),
    });

    expect(await migrate(database)).toEqual({ applied: 0 });

    const rows = await database.db.select().from(schema.prices);
    expect(rows.map((row) => row.priceUsd)).toEqual([1.25]);
    const recorded = await database.db.execute<{ count: string }>(
      sql`select count(*) as count from drizzle.__drizzle_migrations`,
    );
    expect(recorded.rows[0]?.count).toBe(String(migrationCount));
  });

  test("behavior: concurrent calls on one handle apply each migration once", async () => {
    const database = await emptyDatabase();
    const results = await Promise.all([migrate(database), migrate(database), migrate(database)]);
    expect(results.map((result) => result.applied).sort()).toEqual([0, 0, migrationCount]);
    expect(await pendingMigrations(database)).toBe(0);
  });
});

describe("pendingMigrations", () => {
  test("default", async () => {
    const database = await emptyDatabase();
    expect(migrationCount).toBeGreaterThan(0);
    expect(await pendingMigrations(database)).toBe(migrationCount);
    await migrate(database);
    expect(await pendingMigrations(database)).toBe(0);
  });

  test("error: closed database", async () => {
    const database = await emptyDatabase();
    await database.close();
    await expect(pendingMigrations(database)).rejects.toMatchObject({ name: "DatabaseUnavailableError" });
  });
});

describe.skipIf(testDatabaseUrl() === undefined)("migrate on PostgreSQL", () => {
  test("behavior: two processes migrating at once both succeed, migrations apply once", async () => {
    const database = await emptyDatabase();
    if (database.kind !== "postgres") throw new Error("expected PostgreSQL");
    // Two more handles on the same database stand for two processes: each has its own pool and connections.
    const url = new URL(testDatabaseUrl() ?? "");
    url.pathname = (await database.db.execute<{ name: string }>(sql`select current_database() as name`))
      .rows[0]?.name as string;
    const logger = createSilentLogger();
    const others = await Promise.all([
      createDatabase({ databaseUrl: url.toString(), logger, poolSize: 2 }),
      createDatabase({ databaseUrl: url.toString(), logger, poolSize: 2 }),
    ]);
    try {
      const results = await Promise.all([migrate(database), ...others.map((other) => migrate(other))]);
      expect(results.map((result) => result.applied).sort()).toEqual([0, 0, migrationCount]);
      const recorded = await database.db.execute<{ count: string }>(
        sql`select count(*) as count from drizzle.__drizzle_migrations`,
      );
      expect(recorded.rows[0]?.count).toBe(String(migrationCount));
      expect(await tableNames(database)).toEqual(schemaTables.map((table) => table.name).sort());
    } finally {
      await Promise.all(others.map((other) => other.close()));
    }
  });

  test("behavior: the advisory lock is released and the session timeout restored", async () => {
    const database = await emptyDatabase();
    if (database.kind !== "postgres") throw new Error("expected PostgreSQL");
    await migrate(database);
    const locks = await database.db.execute<{ count: string }>(
      sql`select count(*) as count from pg_locks where locktype = 'advisory'
          and database = (select oid from pg_database where datname = current_database())`,
    );
    expect(locks.rows[0]?.count).toBe("0");
    const client = await database.pool.connect();
    try {
      const timeouts = await client.query<{ statement_timeout: string }>("show statement_timeout");
      expect(timeouts.rows[0]?.statement_timeout).toBe("30s");
    } finally {
      client.release();
    }
  });
});
