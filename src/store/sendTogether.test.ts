import { eq, sql } from "drizzle-orm";
import { describe, expect, test } from "vitest";
import { useTestDatabase } from "../../test/helpers/db.ts";
import { transactionRow } from "./_test/rows.ts";
import { isUniqueViolation } from "./errors.ts";
import { storedHashes } from "./indexerState.ts";
import { insertRows } from "./insertRows.ts";
import { transactions } from "./schema.ts";
import { sendTogether } from "./sendTogether.ts";

const hash = (byte: string) => `0x${byte.repeat(32)}`;

describe("sendTogether", () => {
  const db = useTestDatabase();

  test("default: the statements run in the order of the functions, and the results come back in that order", async () => {
    const [inserted, selected, stored] = await db.database.db.transaction((tx) =>
      sendTogether(
        () =>
          insertRows(tx, transactions, [transactionRow(hash("a1"))], {
            returning: sql`returning hash`,
          }),
        // Each sees what the one before it wrote: sent after it, not before (a Drizzle query awaited
        // instead of executed would be sent a microtask later, after the functions that follow it).
        () =>
          tx
            .select({ hash: transactions.hash })
            .from(transactions)
            .where(eq(transactions.hash, hash("a1")))
            .execute(),
        () => storedHashes(tx, [hash("a1"), hash("a2")]),
      ),
    );
    expect(inserted).toEqual([{ hash: hash("a1") }]);
    expect(selected).toEqual([{ hash: hash("a1") }]);
    expect(stored).toEqual(new Set([hash("a1")]));
  });

  test("errors: the first failure in statement order is thrown once every statement has settled, and the transaction rolls back", async () => {
    await insertRows(db.database.db, transactions, [transactionRow(hash("b1"))]);
    const sent: string[] = [];
    const error = await db.database.db
      .transaction((tx) =>
        sendTogether(
          () => insertRows(tx, transactions, [transactionRow(hash("b2"))]),
          () => {
            sent.push("duplicate");
            return insertRows(tx, transactions, [transactionRow(hash("b1"))]);
          },
          // Fails too, only because the transaction is aborted (25P02): not the error to report.
          () => {
            sent.push("after");
            return tx.execute(sql`select 1`).execute();
          },
        ),
      )
      .catch((e: unknown) => e);
    expect(sent).toEqual(["duplicate", "after"]);
    expect(isUniqueViolation(error)).toBe(true);
    expect(await storedHashes(db.database.db, [hash("b1"), hash("b2")])).toEqual(new Set([hash("b1")]));
  });

  test("errors: a function that throws before sending is thrown after the statements sent before it, and none after it is called", async () => {
    const thrown = new Error("encoding failed");
    let calledAfter = false;
    let firstSettled = false;
    const error = await db.database.db
      .transaction((tx) =>
        sendTogether(
          () =>
            insertRows(tx, transactions, [transactionRow(hash("c1"))]).finally(() => {
              firstSettled = true;
            }),
          () => {
            throw thrown;
          },
          () => {
            calledAfter = true;
            return insertRows(tx, transactions, [transactionRow(hash("c2"))]);
          },
        ),
      )
      .catch((e: unknown) => e);
    expect(error).toBe(thrown);
    expect(firstSettled).toBe(true);
    expect(calledAfter).toBe(false);
    expect(await storedHashes(db.database.db, [hash("c1"), hash("c2")])).toEqual(new Set());
  });

  test("behavior: values that are not statements pass through in place", async () => {
    expect(
      await sendTogether(
        () => 1,
        () => undefined,
        () => Promise.resolve("x"),
      ),
    ).toEqual([1, undefined, "x"]);
  });
});
