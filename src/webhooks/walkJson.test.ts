import { describe, expect, test } from "vitest";
import { collectTxHashes, isTxHash, walkJson } from "./walkJson.ts";

const h = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

describe("walkJson", () => {
  test("default: every pair of every object, in document order", () => {
    const seen: string[] = [];
    walkJson({ a: 1, b: [{ c: 2 }, [{ d: 3 }]], e: { f: null } }, (key) => seen.push(key));
    expect(seen).toEqual(["a", "b", "e", "c", "d", "f"]);
  });

  test("behavior: deep nesting does not overflow the stack", () => {
    let doc: unknown = { transactionHash: h(1) };
    for (let i = 0; i < 200_000; i++) doc = [doc];
    expect(collectTxHashes(doc, (k, v) => (k === "transactionHash" ? v : undefined))).toEqual([h(1)]);
  });
});

describe("collectTxHashes", () => {
  test("default: lowercase, each once, in order; non-hashes skipped", () => {
    const upper = `0x${"AB".repeat(32)}`;
    const doc = { x: [{ t: h(2) }, { t: upper }, { t: h(2) }, { t: "0x12" }, { t: 5 }, { t: [h(3), "no"] }] };
    expect(collectTxHashes(doc, (k, v) => (k === "t" ? v : undefined))).toEqual([
      h(2),
      upper.toLowerCase(),
      h(3),
    ]);
  });

  test("isTxHash", () => {
    expect(isTxHash(h(1))).toBe(true);
    expect(isTxHash(h(1).slice(0, 65))).toBe(false);
    expect(isTxHash(`${h(1)}0`)).toBe(false);
    expect(isTxHash(1)).toBe(false);
  });
});
