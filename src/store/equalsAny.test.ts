import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { transactionRow } from "./_test/rows.ts";
import { equalsAny } from "./equalsAny.ts";
import { insertRows } from "./insertRows.ts";
import { transactions } from "./schema.ts";

describe("equalsAny", () => {
  let db: TestDatabase;
  // Text that means something in an array literal or in SQL: each must arrive as itself.
  const awkward = ['a"b', "a,b", "{}", "NULL", "a\\b", "it's", "ünï code", ""];
  beforeAll(async () => {
    db = await createTestDatabase();
    await insertRows(
      db.database.db,
      transactions,
      awkward.map((hash, i) => transactionRow(hash, { blockNumber: i })),
    );
  });
  afterAll(async () => {
    await db?.cleanup();
  });

  const select = (where: ReturnType<typeof equalsAny>) =>
    db.database.db
      .select({ hash: transactions.hash, blockNumber: transactions.blockNumber })
      .from(transactions)
      .where(where)
      .orderBy(transactions.blockNumber);

  test("default: the rows whose column equals one of the texts, each text matched as it is", async () => {
    for (const text of awkward) {
      expect(await select(equalsAny(transactions.hash, [text, "missing"], "text"))).toEqual([
        { hash: text, blockNumber: awkward.indexOf(text) },
      ]);
    }
    expect((await select(equalsAny(transactions.hash, awkward, "text"))).map((r) => r.hash)).toEqual(awkward);
  });

  test("args: int8 numbers, and an empty list matches nothing", async () => {
    expect(await select(equalsAny(transactions.blockNumber, [0, 3, 2 ** 40], "int8"))).toEqual([
      { hash: awkward[0], blockNumber: 0 },
      { hash: awkward[3], blockNumber: 3 },
    ]);
    expect(await select(equalsAny(transactions.hash, [], "text"))).toEqual([]);
  });
});
