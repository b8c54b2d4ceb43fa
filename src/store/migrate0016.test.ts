import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { afterEach, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { MIGRATIONS_FOLDER, migrate } from "./migrate.ts";

const journal = JSON.parse(readFileSync(path.join(MIGRATIONS_FOLDER, "meta/_journal.json"), "utf8")) as {
  entries: { tag: string }[];
};

let open: TestDatabase | undefined;
afterEach(async () => {
  await open?.cleanup();
  open = undefined;
});

test("behavior: 0016 fills the method id of older rows where the stored call tells it, nothing else", async () => {
  open = await createTestDatabase({ migrate: false });
  const database = open.database;
  const db = database.db;
  // The schema before 0016, recorded as Drizzle's migrator records it.
  const files = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  const upTo = journal.entries.findIndex((e) => e.tag.startsWith("0016_"));
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
  const hash = (c: string) => `0x${c.repeat(64)}`;
  const U = `0x${"1".repeat(40)}`;
  await db.execute(sql`
    insert into transactions (hash, block_number, block_hash, transaction_index, block_timestamp, from_address,
      to_address, value_wei, gas_used, gas_price, status, protocol, action_type, function_name, function_args, source)
    values (${hash("a")}, 7, ${hash("f")}, 0, now(), ${U}, ${U}, 5, 21000, 1, true, 'p', 'nativeTransfer', 'transfer', '{}', 'poll'),
           (${hash("b")}, 7, ${hash("f")}, 1, now(), ${U}, ${U}, 0, 1, 1, true, 'p', 'unknown', '0xdeadbeef', '{}', 'poll'),
           (${hash("c")}, 7, ${hash("f")}, 2, now(), ${U}, ${U}, 0, 1, 1, true, 'p', 'swap', 'swap', '{}', 'poll')`);

  expect(await migrate(database)).toEqual({ applied: journal.entries.length - upTo });

  const rows = await db.execute(
    sql`select hash, method_id, nonce, gas_limit, input, cumulative_gas_used from transactions order by hash`,
  );
  expect(rows.rows).toEqual([
    {
      hash: hash("a"),
      method_id: "0x",
      nonce: null,
      gas_limit: null,
      input: null,
      cumulative_gas_used: null,
    },
    {
      hash: hash("b"),
      method_id: "0xdeadbeef",
      nonce: null,
      gas_limit: null,
      input: null,
      cumulative_gas_used: null,
    },
    // A decoded call kept its name, not its selector: a re-index fills it (docs/etherscan.md).
    {
      hash: hash("c"),
      method_id: null,
      nonce: null,
      gas_limit: null,
      input: null,
      cumulative_gas_used: null,
    },
  ]);
});
