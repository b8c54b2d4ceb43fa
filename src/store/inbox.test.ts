import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import type { Db } from "./createDatabase.ts";
import {
  claimNextDelivery,
  completeDelivery,
  countPendingDeliveries,
  failDelivery,
  getDeliveries,
  insertDelivery,
  retryDelivery,
} from "./inbox.ts";
import { webhookInbox } from "./schema.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.database.db;
});

beforeEach(async () => {
  await db.delete(webhookInbox);
});

afterAll(async () => {
  await testDb?.cleanup();
});

const delivery = (deliveryId: string, provider = "alchemy") => ({
  provider,
  deliveryId,
  rawBody: `{"id":"${deliveryId}"}`,
});

/** Make every pending delivery due now (instead of waiting out a lease or a retry delay). */
const makeDue = () => db.update(webhookInbox).set({ nextAttemptAt: sql`now() - interval '1 second'` });

describe("insertDelivery", () => {
  test("default: stores the raw body as pending", async () => {
    const { id, inserted } = await insertDelivery(db, delivery("whevt_1"));
    expect(inserted).toBe(true);
    const [row] = await getDeliveries(db);
    expect(row).toMatchObject({
      id,
      provider: "alchemy",
      deliveryId: "whevt_1",
      rawBody: '{"id":"whevt_1"}',
      status: "pending",
      attempts: 0,
      lastError: null,
      processedAt: null,
    });
    expect(row?.receivedAt).toBeInstanceOf(Date);
    expect(await countPendingDeliveries(db)).toBe(1);
  });

  test("behavior: the same delivery id stores once and answers the stored row", async () => {
    const first = await insertDelivery(db, delivery("whevt_1"));
    const again = await insertDelivery(db, { ...delivery("whevt_1"), rawBody: "{}" });
    expect(again).toEqual({ id: first.id, inserted: false });
    const rows = await getDeliveries(db);
    expect(rows.map((r) => r.rawBody)).toEqual(['{"id":"whevt_1"}']);
  });

  test("behavior: delivery ids are per provider", async () => {
    await insertDelivery(db, delivery("same", "alchemy"));
    expect((await insertDelivery(db, delivery("same", "quicknode"))).inserted).toBe(true);
    expect((await getDeliveries(db, { provider: "quicknode" })).map((r) => r.provider)).toEqual([
      "quicknode",
    ]);
  });
});

describe("claimNextDelivery", () => {
  test("default: oldest first, each once while its lease runs, counting attempts", async () => {
    const a = await insertDelivery(db, delivery("a"));
    const b = await insertDelivery(db, delivery("b"));
    const first = await claimNextDelivery(db, 60_000);
    const second = await claimNextDelivery(db, 60_000);
    expect([first?.id, second?.id]).toEqual([a.id, b.id]);
    expect(first).toMatchObject({ provider: "alchemy", deliveryId: "a", rawBody: '{"id":"a"}', attempts: 1 });
    expect(await claimNextDelivery(db, 60_000)).toBeNull();
  });

  test("behavior: a lapsed lease (dead worker) makes the delivery due again", async () => {
    const a = await insertDelivery(db, delivery("a"));
    await claimNextDelivery(db, 60_000);
    await makeDue();
    const again = await claimNextDelivery(db, 60_000);
    expect(again).toMatchObject({ id: a.id, attempts: 2 });
  });

  test("behavior: concurrent claims never hand out one delivery twice", async () => {
    for (let i = 0; i < 6; i++) await insertDelivery(db, delivery(`d${i}`));
    const claimed = await Promise.all(Array.from({ length: 8 }, () => claimNextDelivery(db, 60_000)));
    const ids = claimed.filter((c) => c !== null).map((c) => c.id);
    expect(ids.length).toBe(6);
    expect(new Set(ids).size).toBe(6);
  });
});

describe("settling", () => {
  test("completeDelivery: done with processed_at, no longer claimable", async () => {
    const { id } = await insertDelivery(db, delivery("a"));
    await claimNextDelivery(db, 60_000);
    await completeDelivery(db, id, "1 irrelevant transaction ignored");
    await makeDue();
    expect(await claimNextDelivery(db, 60_000)).toBeNull();
    const [row] = await getDeliveries(db);
    expect(row).toMatchObject({ status: "done", lastError: "1 irrelevant transaction ignored" });
    expect(row?.processedAt).toBeInstanceOf(Date);
    expect(await countPendingDeliveries(db)).toBe(0);
  });

  test("retryDelivery: pending with the error, due only after the delay", async () => {
    const { id } = await insertDelivery(db, delivery("a"));
    await claimNextDelivery(db, 60_000);
    await retryDelivery(db, id, 60_000, "node unavailable");
    expect(await claimNextDelivery(db, 60_000)).toBeNull();
    const [row] = await getDeliveries(db);
    expect(row).toMatchObject({ status: "pending", attempts: 1, lastError: "node unavailable" });
    expect(row!.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + 50_000);
    await retryDelivery(db, id, 0, "again");
    expect(await claimNextDelivery(db, 60_000)).toMatchObject({ id, attempts: 2 });
  });

  test("behavior: a reason holding U+0000 (a provider's error text) is stored without it", async () => {
    const { id } = await insertDelivery(db, delivery("nul"));
    await retryDelivery(db, id, 60_000, "bad\0 gateway");
    expect((await db.select().from(webhookInbox).where(eq(webhookInbox.id, id)))[0]?.lastError).toBe(
      "bad gateway",
    );
    await failDelivery(db, id, "gave up\0");
    expect((await db.select().from(webhookInbox).where(eq(webhookInbox.id, id)))[0]?.lastError).toBe(
      "gave up",
    );
  });

  test("failDelivery: kept with its body and reason; settled rows are not changed again", async () => {
    const { id } = await insertDelivery(db, delivery("a"));
    await failDelivery(db, id, "unknown provider");
    await retryDelivery(db, id, 0, "late worker");
    await completeDelivery(db, id);
    const rows = await db.select().from(webhookInbox).where(eq(webhookInbox.id, id));
    expect(rows[0]).toMatchObject({ status: "failed", lastError: "unknown provider", rawBody: '{"id":"a"}' });
  });
});
