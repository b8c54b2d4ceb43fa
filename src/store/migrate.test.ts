import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { readMigrationFiles } from "drizzle-orm/migrator";
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

  test("behavior: 0011 keeps the logs, transfers and address rows of a store written before it", async () => {
    const database = await emptyDatabase();
    const db = database.db;
    // The schema up to 0010, recorded as Drizzle's migrator records it, with a block of two transactions.
    const files = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
    const upTo = journal.entries.findIndex((e) => e.tag.startsWith("0011_"));
    for (const migration of files.slice(0, upTo)) {
      for (const statement of migration.sql) await db.execute(sql.raw(statement));
    }
    await db.execute(sql`create schema drizzle`);
    await db.execute(
      sql`create table drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)`,
    );
    await db.execute(
      sql`insert into drizzle.__drizzle_migrations (hash, created_at) values ('before', ${files[upTo - 1]!.folderMillis})`,
    );
    const A = `0x${"a".repeat(64)}`;
    const B = `0x${"b".repeat(64)}`;
    const U = `0x${"1".repeat(40)}`;
    const V = `0x${"2".repeat(40)}`;
    await db.execute(sql`
      insert into transactions (hash, block_number, block_hash, transaction_index, block_timestamp, from_address,
        to_address, value_wei, gas_used, gas_price, status, protocol, action_type, function_name, function_args, source)
      values (${A}, 7, ${B}, 0, now(), ${U}, ${V}, 0, 1, 1, true, 'p', 'swap', 'f', '{}', 'poll'),
             (${B}, 7, ${B}, 3, now(), ${V}, ${U}, 0, 1, 1, true, 'p', 'swap', 'f', '{}', 'poll')`);
    // Log indexes as a chain that numbers them per transaction would give: both transactions have a log 0.
    await db.execute(sql`
      insert into logs (tx_hash, log_index, block_number, address, topics, data)
      values (${A}, 0, 7, ${V}, '{}', '0x'), (${A}, 1, 7, ${V}, '{}', '0x'), (${B}, 0, 7, ${U}, '{}', '0x')`);
    await db.execute(sql`
      insert into token_transfers (tx_hash, log_index, block_number, transaction_index, block_timestamp,
        token_address, from_address, to_address, amount)
      values (${A}, 1, 7, 0, now(), ${V}, ${U}, ${V}, 5), (${B}, 0, 7, 3, now(), ${V}, ${V}, ${U}, 6)`);
    await db.execute(sql`
      insert into address_transactions (address, tx_hash, block_number, transaction_index, protocol)
      values (${U}, ${A}, 7, 0, 'p'), (${V}, ${A}, 7, 0, 'p'), (${U}, ${B}, 7, 3, 'p'), (${V}, ${B}, 7, 3, 'p')`);

    expect(await migrate(database)).toEqual({ applied: migrationCount - upTo });

    const rows = async (query: ReturnType<typeof sql>) => (await db.execute(query)).rows;
    expect(await rows(sql`select tx_hash, transaction_index, log_index from logs order by 1, 3`)).toEqual([
      { tx_hash: A, transaction_index: 0, log_index: 0 },
      { tx_hash: A, transaction_index: 0, log_index: 1 },
      { tx_hash: B, transaction_index: 3, log_index: 0 },
    ]);
    expect(await rows(sql`select tx_hash, amount::text from token_transfers order by 1`)).toEqual([
      { tx_hash: A, amount: "5" },
      { tx_hash: B, amount: "6" },
    ]);
    expect(await rows(sql`select count(*)::int as n from address_transactions`)).toEqual([{ n: 4 }]);
    const keys = await rows(
      sql`select conname from pg_constraint where contype = 'p' and conrelid in
          ('logs'::regclass, 'token_transfers'::regclass, 'address_transactions'::regclass) order by 1`,
    );
    expect(keys).toEqual([
      { conname: "address_transactions_block_tx_address_pk" },
      { conname: "logs_block_tx_log_pk" },
      { conname: "token_transfers_block_tx_log_pk" },
    ]);
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
