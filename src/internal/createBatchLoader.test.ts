import { describe, expect, it } from "vitest";
import { createBatchLoader } from "./createBatchLoader.ts";

/** A loader over `known` that records the keys of each `loadMany` call. */
function recording(known: ReadonlyMap<string, number>, maxBatch = 100) {
  const calls: string[][] = [];
  const load = createBatchLoader(
    async (keys: readonly string[]) => {
      calls.push([...keys]);
      return new Map(keys.filter((k) => known.has(k)).map((k) => [k, known.get(k)!]));
    },
    { maxBatch },
  );
  return { load, calls };
}

describe("createBatchLoader", () => {
  const known = new Map([
    ["a", 1],
    ["b", 2],
    ["c", 3],
  ]);

  it("answers the calls of one turn with one loadMany of their distinct keys", async () => {
    const { load, calls } = recording(known);
    const answers = await Promise.all([load("a"), load("b"), load("a"), load("x")]);
    expect(answers).toEqual([1, 2, 1, undefined]);
    expect(calls).toEqual([["a", "b", "x"]]);
  });

  it("starts a new batch in a later turn", async () => {
    const { load, calls } = recording(known);
    expect(await load("a")).toBe(1);
    expect(await Promise.all([load("b"), load("c")])).toEqual([2, 3]);
    expect(calls).toEqual([["a"], ["b", "c"]]);
  });

  it("sends a full batch at once and the rest of the turn in the next", async () => {
    const { load, calls } = recording(known, 2);
    const answers = await Promise.all([load("a"), load("b"), load("c"), load("a")]);
    expect(answers).toEqual([1, 2, 3, 1]);
    expect(calls).toEqual([
      ["a", "b"],
      ["c", "a"],
    ]);
  });

  it("rejects every call of a batch whose loadMany fails, and loads again afterwards", async () => {
    let fail = true;
    const load = createBatchLoader(
      async (keys: readonly string[]) => {
        if (fail) throw new Error("database gone");
        return new Map(keys.map((k) => [k, k.length]));
      },
      { maxBatch: 10 },
    );
    const results = await Promise.allSettled([load("a"), load("bb")]);
    expect(results.map((r) => (r.status === "rejected" ? (r.reason as Error).message : r.value))).toEqual([
      "database gone",
      "database gone",
    ]);
    fail = false;
    expect(await load("bb")).toBe(2);
  });

  it("refuses a batch size that is not a positive integer", () => {
    expect(() => createBatchLoader(async () => new Map(), { maxBatch: 0 })).toThrow(RangeError);
    expect(() => createBatchLoader(async () => new Map(), { maxBatch: 1.5 })).toThrow(RangeError);
  });
});
