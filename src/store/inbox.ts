import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import { withoutNul } from "../internal/text.ts";
import type { Db } from "./createDatabase.ts";
import { webhookInbox } from "./schema.ts";

/**
 * The durable webhook inbox (SPEC §2 "Webhook deliveries as received", §3.2): a delivery is written here
 * before it is acknowledged, then drained by the inbox worker. Rows are never deleted: `done` and `failed`
 * deliveries stay with their raw body for audit.
 */

export type DeliveryStatus = "pending" | "done" | "failed";

/** A delivery claimed by a worker: it holds it until `next_attempt_at` (the lease) unless it settles it. */
export type ClaimedDelivery = {
  id: number;
  provider: string;
  deliveryId: string;
  rawBody: string;
  /** attempts so far, this one included */
  attempts: number;
  receivedAt: Date;
};

export type StoredDelivery = ClaimedDelivery & {
  status: DeliveryStatus;
  lastError: string | null;
  processedAt: Date | null;
  nextAttemptAt: Date;
};

/** `now() + ms`, computed by the database so that every process shares one clock. */
const inMs = (ms: number) =>
  sql`now() + (${Math.max(0, Math.round(ms))}::double precision * interval '1 millisecond')`;

/** Settling a delivery is a no-op once it is settled (a worker whose lease lapsed may finish late). */
const stillPending = (id: number) => and(eq(webhookInbox.id, id), eq(webhookInbox.status, "pending"));

/**
 * Store a delivery unless one with the same provider delivery id is already stored (a provider retry or a
 * replay): `inserted` tells which, `id` is the stored row either way.
 */
export async function insertDelivery(
  db: Db,
  delivery: { provider: string; deliveryId: string; rawBody: string },
): Promise<{ id: number; inserted: boolean }> {
  const rows = await db
    .insert(webhookInbox)
    .values(delivery)
    .onConflictDoNothing({ target: [webhookInbox.provider, webhookInbox.deliveryId] })
    .returning({ id: webhookInbox.id });
  if (rows[0]) return { id: rows[0].id, inserted: true };
  const existing = await db
    .select({ id: webhookInbox.id })
    .from(webhookInbox)
    .where(
      and(eq(webhookInbox.provider, delivery.provider), eq(webhookInbox.deliveryId, delivery.deliveryId)),
    );
  if (!existing[0]) throw new Error("webhook delivery neither inserted nor found");
  return { id: existing[0].id, inserted: false };
}

/**
 * Take the oldest pending delivery that is due (lowest id first) and hold it for `leaseMs`: its
 * `next_attempt_at` moves forward so that no other worker takes it meanwhile (`FOR UPDATE SKIP LOCKED`
 * keeps two workers claiming at once apart), and a worker that dies lets the lease lapse. Counts the attempt.
 * Backed by the partial index `webhook_inbox_pending_idx`.
 */
export async function claimNextDelivery(db: Db, leaseMs: number): Promise<ClaimedDelivery | null> {
  const due = db
    .select({ id: webhookInbox.id })
    .from(webhookInbox)
    .where(and(eq(webhookInbox.status, "pending"), lte(webhookInbox.nextAttemptAt, sql`now()`)))
    .orderBy(asc(webhookInbox.id))
    .limit(1)
    .for("update", { skipLocked: true });
  const rows = await db
    .update(webhookInbox)
    .set({ attempts: sql`${webhookInbox.attempts} + 1`, nextAttemptAt: inMs(leaseMs) })
    .where(inArray(webhookInbox.id, due))
    .returning({
      id: webhookInbox.id,
      provider: webhookInbox.provider,
      deliveryId: webhookInbox.deliveryId,
      rawBody: webhookInbox.rawBody,
      attempts: webhookInbox.attempts,
      receivedAt: webhookInbox.receivedAt,
    });
  return rows[0] ?? null;
}

/** Mark a delivery processed; `note` (e.g. what was skipped) lands in `last_error` for audit, else cleared. */
export async function completeDelivery(db: Db, id: number, note: string | null = null): Promise<void> {
  await db
    .update(webhookInbox)
    .set({ status: "done", processedAt: sql`now()`, lastError: note === null ? null : withoutNul(note) })
    .where(stillPending(id));
}

/** Keep a delivery pending and due again in `delayMs`, recording why this attempt did not finish it. */
export async function retryDelivery(db: Db, id: number, delayMs: number, error: string): Promise<void> {
  await db
    .update(webhookInbox)
    .set({ nextAttemptAt: inMs(delayMs), lastError: withoutNul(error) })
    .where(stillPending(id));
}

/** Give up on a delivery: it stays in the inbox as `failed` with its raw body and the reason. */
export async function failDelivery(db: Db, id: number, error: string): Promise<void> {
  await db
    .update(webhookInbox)
    .set({ status: "failed", processedAt: sql`now()`, lastError: withoutNul(error) })
    .where(stillPending(id));
}

/** Stored deliveries in arrival order, optionally of one provider (audit, tests). */
export async function getDeliveries(db: Db, filter: { provider?: string } = {}): Promise<StoredDelivery[]> {
  const rows = await db
    .select()
    .from(webhookInbox)
    .where(filter.provider === undefined ? undefined : eq(webhookInbox.provider, filter.provider))
    .orderBy(asc(webhookInbox.id));
  return rows.map((r) => ({ ...r, status: r.status as DeliveryStatus }));
}

/** How many deliveries wait to be processed (due or not). */
export async function countPendingDeliveries(db: Db): Promise<number> {
  const rows = await db
    .select({ n: sql<string>`count(*)` })
    .from(webhookInbox)
    .where(eq(webhookInbox.status, "pending"));
  return Number(rows[0]?.n ?? 0);
}
