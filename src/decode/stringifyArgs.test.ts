import { describe, expect, test } from "vitest";
import { namedArgs, stringifyValue } from "./stringifyArgs.ts";

describe("stringifyValue", () => {
  test("default: bigints and numbers are decimal strings, booleans words, structure kept", () => {
    expect(stringifyValue({ a: 2n ** 255n, b: [1, true, false], c: "x" })).toEqual({
      a: (2n ** 255n).toString(),
      b: ["1", "true", "false"],
      c: "x",
    });
  });

  test("behavior: U+0000 in a string is dropped, at any depth (the database cannot store it)", () => {
    expect(stringifyValue("MKR\0\0\0")).toBe("MKR");
    expect(stringifyValue({ memo: "a\0b", list: ["\0"] })).toEqual({ memo: "ab", list: [""] });
    expect(namedArgs([{ name: "memo", type: "string" }], ["\0hi\0"])).toEqual({ memo: "hi" });
  });
});
