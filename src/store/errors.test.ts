import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, test } from "vitest";
import { driverErrorOf, isConnectionError, isTransientDatabaseError, scrubDriverError } from "./errors.ts";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("isConnectionError", () => {
  test("default", () => {
    expect(isConnectionError(withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"))).toBe(true);
    expect(isConnectionError(withCode("the database system is shutting down", "57P03"))).toBe(true);
    expect(isConnectionError(withCode("sorry, too many clients already", "53300"))).toBe(true);
    expect(isConnectionError(withCode('password authentication failed for user "x"', "28P01"))).toBe(true);
    expect(isConnectionError(new Error("Connection terminated unexpectedly"))).toBe(true);
  });

  test("behavior: statement errors are not connection errors", () => {
    expect(isConnectionError(withCode('relation "x" already exists', "42P07"))).toBe(false);
    expect(isConnectionError(withCode("canceling statement due to statement timeout", "57014"))).toBe(false);
    expect(isConnectionError("oops")).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
  });

  test("behavior: looks through Drizzle's query wrapper", () => {
    const wrapped = new DrizzleQueryError("select 1", [], withCode("connect ECONNRESET", "ECONNRESET"));
    expect(isConnectionError(wrapped)).toBe(true);
    expect(driverErrorOf(wrapped)).toBe(wrapped.cause);
  });
});

describe("isTransientDatabaseError", () => {
  test("default: unreachable, a conflict with concurrent transactions, a statement timeout", () => {
    for (const [message, code] of [
      ["connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"],
      ["deadlock detected", "40P01"],
      ["could not serialize access due to concurrent update", "40001"],
      ["canceling statement due to statement timeout", "57014"],
    ] as const) {
      expect(
        isTransientDatabaseError(new DrizzleQueryError("select 1", [], withCode(message, code))),
        code,
      ).toBe(true);
    }
  });

  test("behavior: an error of the statement itself is not transient", () => {
    expect(isTransientDatabaseError(withCode('relation "x" does not exist', "42P01"))).toBe(false);
    expect(
      isTransientDatabaseError(withCode("duplicate key value violates unique constraint", "23505")),
    ).toBe(false);
    expect(isTransientDatabaseError(new Error("oops"))).toBe(false);
    expect(isTransientDatabaseError(null)).toBe(false);
  });
});

describe("scrubDriverError", () => {
  test("default", () => {
    const original = Object.assign(new TypeError("bad postgres://u:hunter22@h/db"), {
      code: "ERR_INVALID_URL",
      input: "postgres://u:hunter22@h/db",
    });
    const safe = scrubDriverError(original, (text) => text.split("hunter22").join("***"));
    expect(safe.message).toBe("bad postgres://u:***@h/db");
    expect(safe.name).toBe("TypeError");
    expect(safe.stack).toBe("TypeError: bad postgres://u:***@h/db");
    expect({ ...safe }).toEqual({ name: "TypeError", code: "ERR_INVALID_URL" });
  });

  test("args: a Drizzle query error keeps the driver's message, not the query", () => {
    const wrapped = new DrizzleQueryError(
      "insert into t values ($1)",
      ["secret-param"],
      withCode("boom", "XX000"),
    );
    const safe = scrubDriverError(wrapped, (text) => text);
    expect(safe.message).toBe("boom");
    expect(JSON.stringify({ ...safe, message: safe.message })).not.toContain("secret-param");
  });

  test("args: a thrown non-error", () => {
    expect(scrubDriverError("plain", (text) => text).message).toBe("plain");
  });
});
