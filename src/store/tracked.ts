import { and, asc, eq, gt, inArray, isNull, lte, sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { trackedTransactions } from "./schema.ts";

/**
 * The track-tx watch list (SPEC §3.3): hashes submitted to `POST /api/track-tx` that the node did not know as
 * mined yet, re-checked by the track watcher until they are stored, found irrelevant, or expire. Rows are not
 * deleted: a settled row keeps its outcome for audit. Times come from the caller (the watcher's injectable
 * clock), not from the database, so tests can move time.
 */

export type TrackedStatus = "pending" | "indexed" | "not_relevant" | "expired";

/** The pipeline a watched transaction is stored under: track-tx submissions, or webhook transactions a reorg removed. */
export type TrackedSource = "track" | "webhook";

export type TrackedTransaction = {
  txHash: string;
  protocolHint: string | null;
  source: TrackedSource;
  status: TrackedStatus;
  createdAt: Date;
  expiresAt: Date;
  /** when the node was last asked about it; null when it never could be (e.g. the node was down) */
  lastCheckedAt: Date | null;
};

const toTracked = (row: typeof trackedTransactions.$inferSelect): TrackedTransaction => ({
  ...row,
  status: row.status as TrackedStatus,
  source: row.source as TrackedSource,
});

/**
 * Watch `hash` until `expiresAt`. A hash already in the list becomes pending again (a resubmitted expired
 * one is watched anew) with the later expiry, keeping its earlier hint unless a new one is given.
 * `checkedAt` is when the node was last asked (null: not asked, check it on the next pass). `source` (default
 * `track`) is kept from the first watch: a hash watched again keeps the pipeline it was first watched for.
 */
export async function watchTracked(
  db: Db,
  watch: {
    hash: string;
    hint: string | null;
    now: Date;
    expiresAt: Date;
    checkedAt: Date | null;
    source?: TrackedSource;
  },
): Promise<void> {
  const t = trackedTransactions;
  await db
    .insert(t)
    .values({
      txHash: watch.hash.toLowerCase(),
      protocolHint: watch.hint,
      source: watch.source ?? "track",
      status: "pending",
      createdAt: watch.now,
      expiresAt: watch.expiresAt,
      lastCheckedAt: watch.checkedAt,
    })
    .onConflictDoUpdate({
      target: t.txHash,
      set: {
        status: "pending",
        protocolHint: sql`coalesce(excluded.protocol_hint, ${t.protocolHint})`,
        expiresAt: sql`greatest(excluded.expires_at, ${t.expiresAt})`,
        lastCheckedAt: sql`coalesce(excluded.last_checked_at, ${t.lastCheckedAt})`,
      },
    });
}

/**
 * One page of the pending watches still in time at `now`, in hash order after `afterHash` (keyset paging:
 * a pass walks the whole list once whatever it settles on the way). `uncheckedOnly` keeps the ones the node
 * was never asked about. Served by the primary key; the pending set stays small (10-minute lifetime).
 */
export async function getPendingTracked(
  db: Db,
  page: { now: Date; afterHash: string; limit: number; uncheckedOnly?: boolean },
): Promise<TrackedTransaction[]> {
  const t = trackedTransactions;
  const rows = await db
    .select()
    .from(t)
    .where(
      and(
        eq(t.status, "pending"),
        gt(t.expiresAt, page.now),
        gt(t.txHash, page.afterHash),
        page.uncheckedOnly ? isNull(t.lastCheckedAt) : undefined,
      ),
    )
    .orderBy(asc(t.txHash))
    .limit(page.limit);
  return rows.map(toTracked);
}

/**
 * Record what became of watched hashes: `indexed` or `not_relevant` settle them, `pending` only stamps the
 * check time. A hash not in the list is ignored. A settled row is not reopened by a late `pending`.
 */
export async function markTracked(
  db: Db,
  hashes: readonly string[],
  status: "indexed" | "not_relevant" | "pending",
  now: Date,
): Promise<void> {
  if (hashes.length === 0) return;
  const t = trackedTransactions;
  const lower = hashes.map((h) => h.toLowerCase());
  if (status === "pending") {
    await db
      .update(t)
      .set({ lastCheckedAt: now })
      .where(and(inArray(t.txHash, lower), eq(t.status, "pending")));
    return;
  }
  await db.update(t).set({ status, lastCheckedAt: now }).where(inArray(t.txHash, lower));
}

/**
 * Give up on pending watches whose time is up at `now` (SPEC §3.3: watched for up to 10 minutes); returns
 * their hashes. Served by the partial index `tracked_transactions_pending_idx` (pending, by expiry).
 */
export async function expireTracked(db: Db, now: Date): Promise<string[]> {
  const t = trackedTransactions;
  const rows = await db
    .update(t)
    .set({ status: "expired" })
    .where(and(eq(t.status, "pending"), lte(t.expiresAt, now)))
    .returning({ txHash: t.txHash });
  return rows.map((r) => r.txHash);
}

/** One watch by hash (any case), or null. */
export async function getTracked(db: Db, hash: string): Promise<TrackedTransaction | null> {
  const t = trackedTransactions;
  const rows = await db.select().from(t).where(eq(t.txHash, hash.toLowerCase()));
  return rows[0] ? toTracked(rows[0]) : null;
}

/** How many watches are pending (in time or not yet expired by the watcher). */
export async function countPendingTracked(db: Db): Promise<number> {
  const t = trackedTransactions;
  const rows = await db.select({ n: sql<string>`count(*)` }).from(t).where(eq(t.status, "pending"));
  return Number(rows[0]?.n ?? 0);
}
