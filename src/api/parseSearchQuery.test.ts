import { describe, expect, test } from "vitest";
import { ApiError } from "./errorRegistry.ts";
import { parseSearchQuery } from "./parseSearchQuery.ts";

describe("parseSearchQuery", () => {
  test("default: a 32-byte hash, any case, trimmed", () => {
    const hash = `0x${"Ab".repeat(32)}`;
    expect(parseSearchQuery(`  ${hash}\n`)).toEqual({ kind: "hash", hash: hash.toLowerCase(), text: hash });
  });

  test("default: a 20-byte address", () => {
    const address = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
    expect(parseSearchQuery(address)).toEqual({
      kind: "address",
      address: address.toLowerCase(),
      text: address,
    });
  });

  test("default: an integer is a block number", () => {
    expect(parseSearchQuery("1234")).toEqual({ kind: "block", blockNumber: 1234, text: "1234" });
    expect(parseSearchQuery("0")).toEqual({ kind: "block", blockNumber: 0, text: "0" });
    expect(parseSearchQuery("000000000000000000042")).toMatchObject({ kind: "block", blockNumber: 42 });
  });

  test("args: anything else is text", () => {
    for (const text of [
      "DEMO",
      "demo swap",
      "0x1234",
      `0x${"a".repeat(41)}`,
      "1e5",
      "-1",
      "1234567890123456",
    ]) {
      expect(parseSearchQuery(text)).toEqual({ kind: "text", text });
    }
  });

  test("error: empty or whitespace is INVALID_PARAMETER naming q", () => {
    for (const q of ["", "   ", "\t\n"]) {
      let caught: unknown;
      try {
        parseSearchQuery(q);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ApiError);
      expect(caught).toMatchObject({ code: "INVALID_PARAMETER", detail: "q: must not be empty" });
    }
  });
});
