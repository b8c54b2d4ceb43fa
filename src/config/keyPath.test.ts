import { describe, expect, test } from "vitest";
import { formatKeyPath, pointerToSegments } from "./keyPath.ts";

describe("formatKeyPath", () => {
  test("default", () => {
    expect(formatKeyPath(["protocols", 0, "contracts", 1, "address"])).toBe(
      "protocols[0].contracts[1].address",
    );
  });

  test("args: root", () => {
    expect(formatKeyPath([])).toBe("(root)");
  });

  test("args: key that is not an identifier", () => {
    expect(formatKeyPath(["actions", "a.b c"])).toBe('actions["a.b c"]');
  });
});

describe("pointerToSegments", () => {
  test("default", () => {
    const value = { rpc: { urls: ["a", "b"] } };
    expect(pointerToSegments("/rpc/urls/1", value)).toEqual(["rpc", "urls", 1]);
  });

  test("behavior: numeric object key stays a key", () => {
    expect(pointerToSegments("/actions/0", { actions: { "0": "swap" } })).toEqual(["actions", "0"]);
  });

  test("behavior: escaped pointer segments", () => {
    expect(pointerToSegments("/a~1b/c~0d", {})).toEqual(["a/b", "c~d"]);
  });

  test("args: empty pointer", () => {
    expect(pointerToSegments("", {})).toEqual([]);
  });
});
