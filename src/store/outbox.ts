import { and, asc, gt, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import type { Executor } from "./insertRows.ts";
import { insertRows } from "./insertRows.ts";
import { addressTransactions, broadcastOutbox, type OutboxRemovedDetail, transactions } from "./schema.ts";
import { type TransactionDetails, withDetails } from "./transactionReads.ts";

/** The NOTIFY channel of the fan-out; the payload is the highest `seq` the commit wrote (a wake-up only). */
export const OUTBOX_CHANNEL = "protoscan_outbox";

/**
 * Transaction-level advisory lock taken by every outbox writer right before its insert ("outbox!" in ASCII;
 * distinct from the migration and writer locks). Held until commit, it makes `seq` order equal commit order,
 * so a listener that saw `seq` N committed can never later see a smaller one commit: reading `seq > last`
 * misses nothing. Being the last lock a commit takes, it cannot be part of a deadlock.
 */
export const OUTBOX_LOCK_KEY = 0x6f7574626f7821n;

/** One event to announce, keyed by the transaction it is about. */
export type OutboxEvent =
  | { kind: "transaction"; txHash: string; blockNumber: number; blockHash: string }
  | { kind: "removed"; txHash: string; blockNumber: number; blockHash: string; detail: OutboxRemovedDetail };

export type OutboxRow = typeof broadcastOutbox.$inferSelect;

/**
 * Append events to the outbox inside the caller's database transaction (the one that stored or removed what
 * they announce), in the given order, and NOTIFY the listeners; PostgreSQL delivers the notification only if
 * and when that transaction commits.
 */
export async function writeOutbox(tx: Executor, events: readonly OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  await tx.execute(sql`select pg_advisory_xact_lock(${OUTBOX_LOCK_KEY.toString()}::bigint)`);
  const rows = await insertRows(
    tx,
    broadcastOutbox,
    events.map((e) => ({
      kind: e.kind,
      txHash: e.txHash.toLowerCase(),
      blockNumber: e.blockNumber,
      blockHash: e.blockHash.toLowerCase(),
      detail: e.kind === "removed" ? e.detail : null,
    })),
    { returning: sql`returning ${sql.identifier(broadcastOutbox.seq.name)}` },
  );
  const last = Math.max(...rows.map((r) => Number(r[broadcastOutbox.seq.name])));
  await tx.execute(sql`select pg_notify(${OUTBOX_CHANNEL}, ${String(last)})`);
}

/** Outbox rows after `afterSeq`, oldest first, at most `limit`. */
export async function readOutboxAfter(db: Db, afterSeq: number, limit: number): Promise<OutboxRow[]> {
  return db
    .select()
    .from(broadcastOutbox)
    .where(gt(broadcastOutbox.seq, afterSeq))
    .orderBy(asc(broadcastOutbox.seq))
    .limit(limit);
}

/** The newest and oldest `seq` still in the outbox (0 when it is empty: sequences start at 1). */
export async function outboxBounds(db: Db): Promise<{ oldest: number; newest: number }> {
  const result = await db.execute<{ oldest: string | null; newest: string | null }>(
    sql`select min(${broadcastOutbox.seq}) as oldest, max(${broadcastOutbox.seq}) as newest from ${broadcastOutbox}`,
  );
  const row = result.rows[0];
  return { oldest: Number(row?.oldest ?? 0), newest: Number(row?.newest ?? 0) };
}

/**
 * Delete outbox rows older than `olderThanMs` (by their commit time), at most `batch` per statement so a
 * large backlog never holds locks for long. Returns how many were deleted.
 */
export async function pruneOutbox(db: Db, olderThanMs: number, batch = 10_000): Promise<number> {
  let deleted = 0;
  for (;;) {
    const cutoff = new Date(Date.now() - olderThanMs);
    const oldest = db
      .select({ seq: broadcastOutbox.seq })
      .from(broadcastOutbox)
      .where(lt(broadcastOutbox.createdAt, cutoff))
      .orderBy(asc(broadcastOutbox.seq))
      .limit(batch);
    const rows = await db
      .delete(broadcastOutbox)
      .where(inArray(broadcastOutbox.seq, oldest))
      .returning({ seq: broadcastOutbox.seq });
    deleted += rows.length;
    if (rows.length < batch) return deleted;
  }
}

/** A stored transaction as a broadcast needs it: its rows for the JSON, and every party for the topics. */
export type EventDetails = TransactionDetails & { parties: string[] };

/**
 * The stored rows behind `transaction` outbox events, by hash (lowercase): the transaction with its logs
 * and transfers, and its parties from `address_transactions` (the rows endpoint 14 reads). A hash no longer
 * stored (removed by a later reorg) is absent from the map.
 */
export async function readEventDetails(
  db: Db,
  hashes: readonly string[],
): Promise<Map<string, EventDetails>> {
  if (hashes.length === 0) return new Map();
  const unique = [...new Set(hashes)];
  const rows = await db.select().from(transactions).where(inArray(transactions.hash, unique));
  const [details, partyRows] = await Promise.all([
    withDetails(db, rows),
    db
      .select({ txHash: addressTransactions.txHash, address: addressTransactions.address })
      .from(addressTransactions)
      .where(
        and(
          inArray(addressTransactions.blockNumber, [...new Set(rows.map((r) => r.blockNumber))]),
          inArray(addressTransactions.txHash, unique),
        ),
      ),
  ]);
  const parties = new Map<string, string[]>();
  for (const row of partyRows) {
    const list = parties.get(row.txHash);
    if (list) list.push(row.address);
    else parties.set(row.txHash, [row.address]);
  }
  return new Map(details.map((d) => [d.tx.hash, { ...d, parties: parties.get(d.tx.hash) ?? [] }]));
}
