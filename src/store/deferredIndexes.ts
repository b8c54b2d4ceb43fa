import { sql } from "drizzle-orm";
import { getTableConfig } from "drizzle-orm/pg-core";
import type { Db } from "./createDatabase.ts";
import { ingestTransaction } from "./ingestTransaction.ts";
import type { Executor } from "./insertRows.ts";
import { addressTransactions, deferredIndexes, logs, tokenTransfers, transactions } from "./schema.ts";

/**
 * Secondary indexes built in bulk after a first backfill instead of row by row during it, as Ponder does
 * (docs/indexing.md, "Polling cycles"): every non-unique, non-partial index of the four tables a backfill
 * fills. Primary keys stay: they make ingest idempotent, serve lookups by hash and reorg rollbacks, and grow
 * with the chain (cheap to maintain). Partial indexes stay too: they hold few rows (`logs_sync_idx`, the
 * pools' `Sync` logs), and what reads them runs during a backfill: the dex price at a block values every
 * transaction the WebSocket sends, and without the index each valuation scanned every stored log (a 20,000-
 * transaction first start took 15.8 s instead of 6). While they are deferred the API answers from scans:
 * the same answers, slower.
 */
export const DEFERRABLE_INDEXES: readonly string[] = [transactions, logs, tokenTransfers, addressTransactions]
  .flatMap((table) => getTableConfig(table).indexes)
  .filter((index) => !index.config.unique && index.config.where === undefined)
  .map((index) => index.config.name!)
  .sort();

/** The deferrable indexes that exist now, by name, with the statement that builds each (`pg_indexes.indexdef`). */
export async function presentDeferrableIndexes(
  db: Executor,
): Promise<{ name: string; definition: string }[]> {
  const result = await db.execute<{ name: string; definition: string }>(
    sql`select indexname as name, indexdef as definition from pg_indexes
        where schemaname = current_schema() and indexname in (${sql.join(
          DEFERRABLE_INDEXES.map((name) => sql`${name}`),
          sql`, `,
        )}) order by indexname`,
  );
  return result.rows;
}

/**
 * Drop the deferrable indexes that exist, remembering how to build each (`pg_indexes.indexdef`) in
 * `deferred_indexes`, in one database transaction holding the ingest lock (no commit of another process
 * runs meanwhile). Returns the names dropped.
 */
export async function deferIndexes(db: Db): Promise<string[]> {
  return ingestTransaction(db, async (tx) => {
    const present = await presentDeferrableIndexes(tx);
    for (const { name, definition } of present) {
      await tx.insert(deferredIndexes).values({ name, definition }).onConflictDoNothing();
      await tx.execute(sql`drop index ${sql.identifier(name)}`);
    }
    return present.map((r) => r.name);
  });
}

/** Names of the indexes deferred and not built yet. */
export async function listDeferredIndexes(db: Db): Promise<string[]> {
  const rows = await db
    .select({ name: deferredIndexes.name })
    .from(deferredIndexes)
    .orderBy(deferredIndexes.name);
  return rows.map((r) => r.name);
}

/**
 * Build every deferred index, each in its own database transaction with its `deferred_indexes` row removed:
 * a crash keeps the ones built and the rest still listed, and the next call builds those. Each holds the
 * ingest lock, so that two processes building at once (the indexer catching up, another one migrating) take
 * turns instead of racing to create one name. A build may take minutes on a large store, so the
 * connection's statement timeout is lifted for it, and for the wait for another builder's lock. Returns the
 * names built.
 */
export async function buildDeferredIndexes(db: Db): Promise<string[]> {
  const built: string[] = [];
  for (const { name, definition } of await db.select().from(deferredIndexes).orderBy(deferredIndexes.name)) {
    await ingestTransaction(
      db,
      async (tx) => {
        // `CREATE INDEX name ON …` as pg_indexes spells it; IF NOT EXISTS in case it was built by hand.
        await tx.execute(
          sql.raw(definition.replace(/^CREATE (UNIQUE )?INDEX /, "CREATE $1INDEX IF NOT EXISTS ")),
        );
        await tx.delete(deferredIndexes).where(sql`${deferredIndexes.name} = ${name}`);
      },
      { unlimited: true },
    );
    built.push(name);
  }
  return built;
}

/**
 * Before migrations run (store/migrate.ts): build the deferred indexes, so that a migration finds the schema
 * it was written against. A no-op before the table exists.
 */
export async function buildDeferredIndexesBeforeMigrating(db: Db): Promise<string[]> {
  const table = await db.execute<{ present: boolean }>(
    sql`select to_regclass('deferred_indexes') is not null as present`,
  );
  return table.rows[0]?.present === true ? buildDeferredIndexes(db) : [];
}
