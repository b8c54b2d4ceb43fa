import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  createTestDatabase,
  type TestDatabase,
  testDatabaseUrl,
  useTestDatabase,
} from "../../test/helpers/db.ts";
import { ALICE, swapTransaction } from "../realtime/_test/fixtures.ts";
import { commitBatch } from "./commitBatch.ts";
import type { Db } from "./createDatabase.ts";
import {
  buildDeferredIndexes,
  buildDeferredIndexesBeforeMigrating,
  DEFERRABLE_INDEXES,
  deferIndexes,
  listDeferredIndexes,
} from "./deferredIndexes.ts";
import { INGEST_LOCK_KEY } from "./ingestTransaction.ts";
import { removeBlocks } from "./removeBlocks.ts";
import * as schema from "./schema.ts";
import { getTransactionSummaries } from "./transactionSummaries.ts";

/** name -> definition of every index of the four ingest tables, as PostgreSQL reports them. */
async function ingestIndexes(db: Db): Promise<Record<string, string>> {
  const result = await db.execute<{ name: string; definition: string }>(
    sql`select indexname as name, indexdef as definition from pg_indexes
        where tablename in ('transactions', 'logs', 'token_transfers', 'address_transactions')
        order by indexname`,
  );
  return Object.fromEntries(result.rows.map((r) => [r.name, r.definition]));
}

const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as const;

describe("deferredIndexes", () => {
  let tdb: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = tdb.database.db;
  });
  afterAll(async () => {
    await tdb?.cleanup();
  });

  test("default: the secondary indexes of the ingest tables, not their primary keys nor partial ones", () => {
    expect(DEFERRABLE_INDEXES).toEqual([
      "address_transactions_address_block_idx",
      "address_transactions_address_protocol_block_idx",
      "token_transfers_token_block_idx",
      "token_transfers_token_from_block_idx",
      "token_transfers_token_to_block_idx",
      "transactions_action_block_idx",
      "transactions_block_idx",
      "transactions_protocol_action_block_idx",
      "transactions_protocol_block_idx",
      "transactions_timestamp_idx",
    ]);
  });

  test("default: deferred, ingest and rollback still work, then built again exactly as they were", async () => {
    const before = await ingestIndexes(db);
    expect(Object.keys(before)).toEqual(expect.arrayContaining([...DEFERRABLE_INDEXES]));

    expect(await deferIndexes(db)).toEqual(DEFERRABLE_INDEXES);
    expect(await listDeferredIndexes(db)).toEqual(DEFERRABLE_INDEXES);
    const during = await ingestIndexes(db);
    expect(Object.keys(during).sort()).toEqual(
      Object.keys(before)
        .filter((name) => !DEFERRABLE_INDEXES.includes(name))
        .sort(),
    );
    // Deferring twice drops nothing more and forgets nothing.
    expect(await deferIndexes(db)).toEqual([]);
    expect(await listDeferredIndexes(db)).toEqual(DEFERRABLE_INDEXES);

    // Without the indexes, a commit, a read by hash and a rollback behave as with them.
    const blocks = [1, 2].map((n) => ({
      number: n,
      hash: hash(1000 + n),
      parentHash: hash(999 + n),
      timestamp: new Date(),
    }));
    const txs = [1, 2].map((n) =>
      swapTransaction({ hash: hash(n), blockNumber: n, blockHash: hash(1000 + n), transactionIndex: 0 }),
    );
    const { inserted } = await commitBatch(db, {
      source: "poll",
      transactions: txs,
      blocks,
      deltaTokens: new Set(),
    });
    expect(inserted).toHaveLength(2);
    expect((await getTransactionSummaries(db, [hash(2)]))[0]?.tx.blockNumber).toBe(2);
    const { removed } = await removeBlocks(db, { after: 1 }, new Set());
    expect(removed.map((r) => r.hash)).toEqual([hash(2)]);
    expect(await getTransactionSummaries(db, [hash(2)])).toEqual([]);

    expect(await buildDeferredIndexes(db)).toEqual(DEFERRABLE_INDEXES);
    expect(await listDeferredIndexes(db)).toEqual([]);
    expect(await ingestIndexes(db)).toEqual(before);
    // Building again is a no-op; so is the migration-time build with nothing deferred.
    expect(await buildDeferredIndexes(db)).toEqual([]);
    expect(await buildDeferredIndexesBeforeMigrating(db)).toEqual([]);
    expect((await getTransactionSummaries(db, [hash(1)]))[0]?.tx.fromAddress).toBe(ALICE.toLowerCase());
  });

  test("error: an index built by hand meanwhile is kept, and its row is cleared", async () => {
    const before = await ingestIndexes(db);
    await deferIndexes(db);
    await db.execute(sql.raw(before.transactions_block_idx!));
    expect(await buildDeferredIndexes(db)).toEqual(DEFERRABLE_INDEXES);
    expect(await ingestIndexes(db)).toEqual(before);
    expect(await listDeferredIndexes(db)).toEqual([]);
  });

  test("behavior: two builds at once (an indexer catching up, a process migrating) both succeed", async () => {
    const before = await ingestIndexes(db);
    await deferIndexes(db);
    // On PostgreSQL each call runs on its own pooled connection.
    const [a, b] = await Promise.all([buildDeferredIndexes(db), buildDeferredIndexes(db)]);
    expect(new Set([...a, ...b])).toEqual(new Set(DEFERRABLE_INDEXES));
    expect(await ingestIndexes(db)).toEqual(before);
    expect(await listDeferredIndexes(db)).toEqual([]);
  });
});

describe.skipIf(testDatabaseUrl() === undefined)("deferredIndexes on PostgreSQL", () => {
  const tdb = useTestDatabase();

  test("behavior: a build waits for another holder of the ingest lock longer than the statement timeout", async () => {
    const before = await ingestIndexes(tdb.database.db);
    await deferIndexes(tdb.database.db);
    // protoscan's pool has a 30 s statement timeout; this one 300 ms, to see the wait outlast it.
    const pool = new pg.Pool({ connectionString: tdb.url, max: 2, statement_timeout: 300 });
    const holder = new pg.Client({ connectionString: tdb.url });
    await holder.connect();
    try {
      const db: Db = drizzle({ client: pool, schema });
      await expect(db.execute(sql`select pg_sleep(1)`)).rejects.toMatchObject({ cause: { code: "57014" } });
      await holder.query("select pg_advisory_lock($1::bigint)", [INGEST_LOCK_KEY.toString()]);
      const building = buildDeferredIndexes(db);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await holder.query("select pg_advisory_unlock($1::bigint)", [INGEST_LOCK_KEY.toString()]);
      expect(await building).toEqual(DEFERRABLE_INDEXES);
      expect(await ingestIndexes(db)).toEqual(before);
    } finally {
      await holder.end();
      await pool.end();
    }
  });
});
