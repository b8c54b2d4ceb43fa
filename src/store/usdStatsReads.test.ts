import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import type { Db } from "./createDatabase.ts";
import { getHolderBalances, getNewestBlockTime } from "./usdStatsReads.ts";

const hex = (i: number, width: number) => `0x${i.toString(16).padStart(width, "0")}`;
const [USDC, WETH, RWD] = [hex(0xa1, 40), hex(0xa2, 40), hex(0xa4, 40)];
const [PAIR, VAULT, U1] = [hex(0xb1, 40), hex(0xb3, 40), hex(0xc1, 40)];

let tdb: TestDatabase;
let db: Db;
beforeAll(async () => {
  tdb = await createTestDatabase();
  db = tdb.database.db;
});
afterAll(() => tdb?.cleanup());

test("default: holder balances by key, absent pairs left out", async () => {
  await db.execute(sql`
    insert into token_balances (token_address, holder, balance, block_number) values
      (${USDC}, ${PAIR}, 1500000000000, 10), (${WETH}, ${PAIR}, 500000000000000000000, 10),
      (${USDC}, ${U1}, 5, 10), (${RWD}, ${VAULT}, 0, 10)`);
  const rows = await getHolderBalances(db, [USDC, WETH, RWD], [PAIR, VAULT]);
  expect(rows.map((r) => [r.token, r.holder, r.balance]).sort()).toEqual(
    [
      [USDC, PAIR, 1_500_000_000_000n],
      [WETH, PAIR, 500n * 10n ** 18n],
      [RWD, VAULT, 0n],
    ].sort(),
  );
  expect(await getHolderBalances(db, [], [PAIR])).toEqual([]);
  expect(await getHolderBalances(db, [USDC], [])).toEqual([]);
});

test("default: the newest stored block's time, null before any", async () => {
  expect(await getNewestBlockTime(db)).toBeNull();
  await db.execute(sql`
    insert into blocks (number, hash, parent_hash, timestamp) values
      (9, ${hex(9, 64)}, ${hex(8, 64)}, '2026-11-21T07:59:00Z'),
      (7, ${hex(7, 64)}, ${hex(6, 64)}, '2026-11-21T07:00:00Z')`);
  expect(await getNewestBlockTime(db)).toEqual(new Date("2026-11-21T07:59:00Z"));
});
