import { eq } from "drizzle-orm";
import { describe, expect, test } from "vitest";
import { testDatabaseUrl, useTestDatabase } from "../../test/helpers/db.ts";
import { logRows, transactionRow } from "./_test/rows.ts";
import { canCopyRows, copyRows } from "./copyRows.ts";
import { isUniqueViolation } from "./errors.ts";
import { logs, transactions } from "./schema.ts";

const HASH = `0x${"ab".repeat(32)}`;
/** Every character COPY's text format gives a meaning, and some JSON and array literals do. */
const AWKWARD = 'tab\there, line\nbreak, cr\r, back\\slash, \\N, "quotes", {braces}, commas, ünïcode 🦄';

/** A row with AWKWARD text in a plain text column, in jsonb and in a jsonb array. */
const transaction = (hash: string, overrides: Parameters<typeof transactionRow>[1] = {}) =>
  transactionRow(hash, {
    actionType: AWKWARD,
    functionArgs: { note: AWKWARD, list: ["1", AWKWARD], nested: { a: null } },
    ...overrides,
  });

describe("copyRows", () => {
  const db = useTestDatabase();

  test("default: PGlite copies, node-postgres does not", () => {
    expect(canCopyRows(db.database.db)).toBe(db.database.kind === "pglite");
  });

  describe.skipIf(testDatabaseUrl() !== undefined)("on PGlite", () => {
    test("default: every column type round-trips exactly, defaults fill omitted columns", async () => {
      const rows = [
        transaction(HASH),
        transaction(`0x${"ac".repeat(32)}`, { toAddress: "0x01", status: true }),
      ];
      await copyRows(db.database.db, transactions, rows);
      const stored = await db.database.db.select().from(transactions).orderBy(transactions.hash);
      expect(stored.map(({ storedAt, ...rest }) => rest)).toEqual(rows);
      for (const row of stored) expect(row.storedAt).toBeInstanceOf(Date);
    });

    test("behavior: text arrays with awkward elements, empty arrays and null jsonb", async () => {
      const rows = logRows(HASH, {
        topics: [`0x${"11".repeat(32)}`, AWKWARD, "NULL", ""],
        data: AWKWARD,
        eventArgs: { value: "1", memo: AWKWARD },
      });
      await copyRows(db.database.db, logs, rows);
      const stored = await db.database.db
        .select()
        .from(logs)
        .where(eq(logs.txHash, HASH))
        .orderBy(logs.logIndex);
      expect(stored).toEqual(rows);
    });

    test("behavior: a row stored already fails the whole statement with a unique violation, inside a transaction too", async () => {
      const other = `0x${"ef".repeat(32)}`;
      const error = await db.database.db
        .transaction((tx) => copyRows(tx, transactions, [transaction(other), transaction(HASH)]))
        .catch((e: unknown) => e);
      expect(isUniqueViolation(error)).toBe(true);
      expect(await db.database.db.select().from(transactions).where(eq(transactions.hash, other))).toEqual(
        [],
      );
    });

    test("behavior: no rows is no statement", async () => {
      await copyRows(db.database.db, transactions, []);
    });
  });
});
