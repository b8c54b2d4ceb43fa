import { afterAll, beforeAll, beforeEach, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import type { Db } from "./createDatabase.ts";
import { trackedTransactions } from "./schema.ts";
import {
  countPendingTracked,
  expireTracked,
  getPendingTracked,
  getTracked,
  markTracked,
  watchTracked,
} from "./tracked.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.database.db;
});

afterAll(async () => {
  await testDb?.cleanup();
});

beforeEach(async () => {
  await db.delete(trackedTransactions);
});

const T0 = new Date("2026-11-21T08:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const TEN_MIN = 600_000;

const watch = (n: number, options: { hint?: string | null; now?: Date; checked?: boolean } = {}) => {
  const now = options.now ?? T0;
  return watchTracked(db, {
    hash: hash(n),
    hint: options.hint ?? null,
    now,
    expiresAt: new Date(now.getTime() + TEN_MIN),
    checkedAt: options.checked === false ? null : now,
  });
};

test("default: a watch is stored pending with its hint and times", async () => {
  await watchTracked(db, {
    hash: hash(1).toUpperCase().replace("0X", "0x"),
    hint: "demoswap",
    now: T0,
    expiresAt: at(TEN_MIN),
    checkedAt: T0,
  });
  expect(await getTracked(db, hash(1))).toEqual({
    txHash: hash(1),
    protocolHint: "demoswap",
    source: "track",
    status: "pending",
    createdAt: T0,
    expiresAt: at(TEN_MIN),
    lastCheckedAt: T0,
  });
  expect(await getTracked(db, hash(2))).toBeNull();
  expect(await countPendingTracked(db)).toBe(1);
});

test("behavior: a watch keeps the source it was first watched for", async () => {
  const watchAs = (source?: "track" | "webhook") =>
    watchTracked(db, {
      hash: hash(3),
      hint: null,
      now: T0,
      expiresAt: at(TEN_MIN),
      checkedAt: null,
      ...(source ? { source } : {}),
    });
  await watchAs("webhook");
  expect((await getTracked(db, hash(3)))?.source).toBe("webhook");
  await watchAs("track");
  await watchAs();
  expect((await getTracked(db, hash(3)))?.source).toBe("webhook");
});

test("behavior: watching again keeps one row, the later expiry and the earlier hint unless a new one is given", async () => {
  await watch(1, { hint: "demoswap" });
  await watch(1, { now: at(60_000) });
  let row = await getTracked(db, hash(1));
  expect(row?.expiresAt).toEqual(at(60_000 + TEN_MIN));
  expect(row?.protocolHint).toBe("demoswap");
  expect(row?.createdAt).toEqual(T0);
  await watch(1, { hint: "demovault", now: at(30_000), checked: false });
  row = await getTracked(db, hash(1));
  expect(row?.protocolHint).toBe("demovault");
  expect(row?.expiresAt).toEqual(at(60_000 + TEN_MIN));
  expect(row?.lastCheckedAt).toEqual(at(60_000));
  expect(await countPendingTracked(db)).toBe(1);
});

test("behavior: an expired watch submitted again is pending again", async () => {
  await watch(1);
  expect(await expireTracked(db, at(TEN_MIN))).toEqual([hash(1)]);
  expect((await getTracked(db, hash(1)))?.status).toBe("expired");
  await watch(1, { now: at(TEN_MIN + 1) });
  const row = await getTracked(db, hash(1));
  expect(row?.status).toBe("pending");
  expect(row?.expiresAt).toEqual(at(2 * TEN_MIN + 1));
});

test("behavior: expiry takes exactly the pending watches whose time is up", async () => {
  await watch(1);
  await watch(2, { now: at(1_000) });
  await watch(3);
  await markTracked(db, [hash(3)], "indexed", at(10));
  expect(await expireTracked(db, at(TEN_MIN - 1))).toEqual([]);
  expect(await expireTracked(db, at(TEN_MIN))).toEqual([hash(1)]);
  expect((await getTracked(db, hash(2)))?.status).toBe("pending");
  expect((await getTracked(db, hash(3)))?.status).toBe("indexed");
  expect(await expireTracked(db, at(TEN_MIN + 1_000))).toEqual([hash(2)]);
  expect(await countPendingTracked(db)).toBe(0);
});

test("behavior: pending pages walk the list in hash order, skip expired and settled ones", async () => {
  for (const n of [5, 1, 4, 2, 3]) await watch(n);
  await watch(6, { now: at(-TEN_MIN) }); // expires at T0
  await markTracked(db, [hash(4)], "not_relevant", T0);
  const first = await getPendingTracked(db, { now: T0, afterHash: "", limit: 2 });
  expect(first.map((r) => r.txHash)).toEqual([hash(1), hash(2)]);
  const second = await getPendingTracked(db, { now: T0, afterHash: hash(2), limit: 2 });
  expect(second.map((r) => r.txHash)).toEqual([hash(3), hash(5)]);
  expect(await getPendingTracked(db, { now: T0, afterHash: hash(5), limit: 2 })).toEqual([]);
});

test("args: uncheckedOnly keeps the watches the node was never asked about", async () => {
  await watch(1);
  await watch(2, { checked: false });
  const rows = await getPendingTracked(db, { now: T0, afterHash: "", limit: 10, uncheckedOnly: true });
  expect(rows.map((r) => r.txHash)).toEqual([hash(2)]);
});

test("behavior: mark settles or stamps, and a late pending does not reopen a settled watch", async () => {
  await watch(1, { checked: false });
  await watch(2, { checked: false });
  await markTracked(db, [hash(1)], "pending", at(5_000));
  expect(await getTracked(db, hash(1))).toMatchObject({ status: "pending", lastCheckedAt: at(5_000) });
  await markTracked(db, [hash(2)], "indexed", at(6_000));
  await markTracked(db, [hash(2)], "pending", at(7_000));
  expect(await getTracked(db, hash(2))).toMatchObject({ status: "indexed", lastCheckedAt: at(6_000) });
  await markTracked(db, [hash(9)], "indexed", at(6_000)); // not watched: nothing happens
  expect(await getTracked(db, hash(9))).toBeNull();
  await markTracked(db, [], "indexed", at(6_000));
});
