import { eq, sql } from "drizzle-orm";
import { describe, expect, test } from "vitest";
import { useTestDatabase } from "../../test/helpers/db.ts";
import { namedArgs } from "../decode/stringifyArgs.ts";
import { logRows, transactionRow } from "./_test/rows.ts";
import { insertRows } from "./insertRows.ts";
import { blocks, logs, transactions } from "./schema.ts";

const HASH = `0x${"ab".repeat(32)}`;
describe("insertRows", () => {
  const db = useTestDatabase();

  test("default: every column type round-trips exactly, defaults fill omitted columns", async () => {
    const row = transactionRow(HASH);
    const returned = await insertRows(db.database.db, transactions, [row], {
      returning: sql`returning hash`,
    });
    expect(returned).toEqual([{ hash: HASH }]);
    const [stored] = await db.database.db.select().from(transactions).where(eq(transactions.hash, HASH));
    const { storedAt, ...rest } = stored!;
    expect(rest).toEqual(row);
    expect(storedAt).toBeInstanceOf(Date);
  });

  test("behavior: arrays, null jsonb and empty arrays", async () => {
    const rows = logRows(HASH);
    await insertRows(db.database.db, logs, rows);
    const stored = await db.database.db
      .select()
      .from(logs)
      .where(eq(logs.txHash, HASH))
      .orderBy(logs.logIndex);
    expect(stored).toEqual(rows);
    const nulls = await db.database.db.execute<{ n: boolean }>(
      sql`select event_args is null as n from logs where tx_hash = ${HASH} and log_index = 1`,
    );
    expect(nulls.rows).toEqual([{ n: true }]);
  });

  test("args: onConflict do nothing returns only the new rows", async () => {
    const other = `0x${"ef".repeat(32)}`;
    const returned = await insertRows(
      db.database.db,
      transactions,
      [transactionRow(HASH), transactionRow(other)],
      {
        onConflict: sql`on conflict do nothing`,
        returning: sql`returning hash`,
      },
    );
    expect(returned).toEqual([{ hash: other }]);
  });

  test("args: onConflict do update", async () => {
    const row = { number: 9, hash: "0x01", parentHash: "0x00", timestamp: new Date(0) };
    await insertRows(db.database.db, blocks, [row]);
    await insertRows(db.database.db, blocks, [{ ...row, hash: "0x02" }], {
      onConflict: sql`on conflict (number) do update set hash = excluded.hash`,
    });
    expect(await db.database.db.select().from(blocks).where(eq(blocks.number, 9))).toEqual([
      { ...row, hash: "0x02" },
    ]);
  });

  test("behavior: decoded args from a string holding U+0000 are stored; the raw character would be refused", async () => {
    const memo = `0x${"a1".repeat(32)}`;
    const raw = { memo: "gm\0\0" };
    await expect(
      insertRows(db.database.db, transactions, [transactionRow(memo, { functionArgs: raw })]),
    ).rejects.toThrow();
    const decoded = namedArgs([{ name: "memo", type: "string" }], [raw.memo]);
    await insertRows(db.database.db, transactions, [transactionRow(memo, { functionArgs: decoded })]);
    const [stored] = await db.database.db.select().from(transactions).where(eq(transactions.hash, memo));
    expect(stored?.functionArgs).toEqual({ memo: "gm" });
  });

  test("behavior: no rows is no statement", async () => {
    expect(await insertRows(db.database.db, blocks, [])).toEqual([]);
  });
});
