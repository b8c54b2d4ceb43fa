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

  it("refuses a batch size or a number in flight that is not a positive integer", () => {
    expect(() => createBatchLoader(async () => new Map(), { maxBatch: 0 })).toThrow(RangeError);
    expect(() => createBatchLoader(async () => new Map(), { maxBatch: 1.5 })).toThrow(RangeError);
    expect(() => createBatchLoader(async () => new Map(), { maxBatch: 1, maxInFlight: 0 })).toThrow(
      RangeError,
    );
  });
});

/** A loader whose `loadMany` calls wait until the test settles them, in order (`settle(i)` answers call i). */
function held(maxBatch: number, maxInFlight: number) {
  const calls: { keys: string[]; answer(): void; fail(error: Error): void }[] = [];
  const load = createBatchLoader(
    (keys: readonly string[]) =>
      new Promise<ReadonlyMap<string, string>>((resolve, reject) => {
        calls.push({
          keys: [...keys],
          answer: () => resolve(new Map(keys.map((k) => [k, k.toUpperCase()]))),
          fail: reject,
        });
      }),
    { maxBatch, maxInFlight },
  );
  return { load, calls };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** One slot: the batch of "a" is with the database (`calls[0]`), "b" waits for the slot in the next one. */
async function oneRunningOneWaiting() {
  const { load, calls } = held(100, 1);
  const first = load("a");
  await turn();
  const second = load("b");
  await turn();
  return { first, second, calls };
}

describe("createBatchLoader with maxInFlight", () => {
  it("gathers the keys of the turns that pass while a batch runs into the next batch", async () => {
    const { load, calls } = held(100, 1);
    const first = load("a");
    await turn();
    expect(calls.map((c) => c.keys)).toEqual([["a"]]);
    // Three later turns while the first batch runs: one batch of their keys, sent when it ends.
    const later = [load("b"), load("c")];
    await turn();
    later.push(load("d"), load("b"));
    await turn();
    await turn();
    expect(calls).toHaveLength(1);
    calls[0]!.answer();
    expect(await first).toBe("A");
    await turn();
    expect(calls.map((c) => c.keys)).toEqual([["a"], ["b", "c", "d"]]);
    calls[1]!.answer();
    expect(await Promise.all(later)).toEqual(["B", "C", "D", "B"]);
  });

  it("runs at most maxInFlight batches at once and sends full batches waiting for a slot in order", async () => {
    const { load, calls } = held(2, 2);
    const answers = ["a", "b", "c", "d", "e", "f", "g"].map((k) => load(k));
    await turn();
    expect(calls.map((c) => c.keys)).toEqual([
      ["a", "b"],
      ["c", "d"],
    ]);
    calls[1]!.answer();
    await turn();
    expect(calls.map((c) => c.keys)).toEqual([
      ["a", "b"],
      ["c", "d"],
      ["e", "f"],
    ]);
    calls[0]!.answer();
    await turn();
    expect(calls.at(-1)!.keys).toEqual(["g"]);
    calls[2]!.answer();
    calls[3]!.answer();
    expect(await Promise.all(answers)).toEqual(["A", "B", "C", "D", "E", "F", "G"]);
  });

  it("sends the next batch before the callers of the one that ended hear their answers", async () => {
    const { first, second, calls } = await oneRunningOneWaiting();
    expect(calls).toHaveLength(1);
    // What a caller does with its answer (render and write a response) must not hold the next batch back:
    // by the time the first caller runs, the second batch is with the database already.
    const sentBeforeTheAnswer = first.then(() => calls.map((c) => c.keys));
    calls[0]!.answer();
    expect(await sentBeforeTheAnswer).toEqual([["a"], ["b"]]);
    calls[1]!.answer();
    expect(await second).toBe("B");
  });

  it("sends the next batch before the callers of a failed one hear the error", async () => {
    const { first: failing, second: next, calls } = await oneRunningOneWaiting();
    const sentBeforeTheError = failing.catch((error: Error) => [error.message, calls.length]);
    calls[0]!.fail(new Error("database gone"));
    expect(await sentBeforeTheError).toEqual(["database gone", 2]);
    calls[1]!.answer();
    expect(await next).toBe("B");
  });

  it("rejects the calls of a batch whose loadMany throws at once, and goes on", async () => {
    let throwNow = true;
    const load = createBatchLoader(
      (keys: readonly string[]) => {
        if (throwNow) throw new Error("not even started");
        return Promise.resolve(new Map(keys.map((k) => [k, k.toUpperCase()])));
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    await expect(load("a")).rejects.toThrow("not even started");
    throwNow = false;
    expect(await load("b")).toBe("B");
  });

  it("frees the slot of a batch that fails", async () => {
    const { first: failing, second: next, calls } = await oneRunningOneWaiting();
    calls[0]!.fail(new Error("database gone"));
    await expect(failing).rejects.toThrow("database gone");
    await turn();
    expect(calls.map((c) => c.keys)).toEqual([["a"], ["b"]]);
    calls[1]!.answer();
    expect(await next).toBe("B");
  });
});
