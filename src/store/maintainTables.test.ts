import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { captureQueries, explainQuery } from "../../test/helpers/explain.ts";
import { upsertReadings } from "./balanceWrites.ts";
import { maintainTables } from "./maintainTables.ts";
import { getTopHolders } from "./tokenReads.ts";

const TOKEN = `0x${"1".repeat(40)}` as const;
const holder = (i: number) => `0x${i.toString(16).padStart(40, "0")}` as const;

/** Pages now and at the last VACUUM/ANALYZE of every table of the schema. */
async function pageCounts(tdb: TestDatabase) {
  const result = await tdb.database.db.execute<{ table: string; pages: string; pages_before: number }>(sql`
    select relname as "table", pg_relation_size(oid) / current_setting('block_size')::int as pages,
      relpages as pages_before
    from pg_class where relkind = 'r' and relnamespace = current_schema()::regnamespace`);
  return result.rows.map((r) => ({ table: r.table, pages: Number(r.pages), before: Number(r.pages_before) }));
}

describe("maintainTables", () => {
  let tdb: TestDatabase;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    // 20,000 holders of one token, as a backfill leaves them: never analyzed, never vacuumed.
    await upsertReadings(
      tdb.database.db,
      Array.from({ length: 20_000 }, (_, i) => ({
        token: TOKEN,
        holder: holder(i + 1),
        balance: BigInt(i + 1) * 10n ** 18n,
        blockNumber: 1,
      })),
    );
  });
  afterAll(async () => {
    await tdb?.cleanup();
  });

  test("default: every grown table is vacuumed and analyzed, then nothing is due", async () => {
    const done = await maintainTables(tdb.database.db);
    // On PostgreSQL autovacuum may have got there first; on PGlite nothing else ever does.
    if (tdb.database.kind === "pglite") expect(done.map((t) => t.table)).toContain("token_balances");
    for (const t of await pageCounts(tdb)) {
      if (t.pages >= 32) expect(t.pages, t.table).toBeLessThanOrEqual(t.before * 1.2);
    }
    expect(await maintainTables(tdb.database.db)).toEqual([]);
  });

  test("behavior: the holders page at a deep offset walks its index once statistics exist", async () => {
    await maintainTables(tdb.database.db);
    const [query] = await captureQueries(tdb.database, () =>
      getTopHolders(tdb.database.db, TOKEN, { limit: 26, offset: 5000 }),
    );
    const plan = await explainQuery(tdb.database, query!);
    expect(plan).toMatch(/Index Only Scan using token_balances_token_balance_idx/);
    expect(plan).not.toMatch(/Sort|Seq Scan/);
    const page = await getTopHolders(tdb.database.db, TOKEN, { limit: 2, offset: 5000 });
    expect(page).toEqual([
      { holder: holder(15_000), balance: 15_000n * 10n ** 18n },
      { holder: holder(14_999), balance: 14_999n * 10n ** 18n },
    ]);
  });

  test("args: growth and minPages", async () => {
    await upsertReadings(
      tdb.database.db,
      Array.from({ length: 2_000 }, (_, i) => ({
        token: TOKEN,
        holder: holder(100_000 + i),
        balance: 1n,
        blockNumber: 2,
      })),
    );
    // 2,000 rows on 20,000: about 10% growth, below the default 20%.
    expect(await maintainTables(tdb.database.db)).toEqual([]);
    expect(await maintainTables(tdb.database.db, { minPages: 1_000_000, growth: 0 })).toEqual([]);
    const done = await maintainTables(tdb.database.db, { growth: 0.05 });
    expect(done.map((t) => t.table)).toContain("token_balances");
  });
});
