import { describe, expect, test } from "vitest";
import { createTtlCache } from "./createTtlCache.ts";

describe("createTtlCache", () => {
  test("default: a value is loaded once and served until it expires", async () => {
    let clock = 0;
    let loads = 0;
    const cache = createTtlCache<string, number>({ ttlMs: 5000, now: () => clock });
    const load = async () => ++loads;
    expect(await cache.get("a", load)).toBe(1);
    clock = 4999;
    expect(await cache.get("a", load)).toBe(1);
    clock = 5000;
    expect(await cache.get("a", load)).toBe(2);
    expect(loads).toBe(2);
  });

  test("behavior: concurrent readers of a missing key share one load", async () => {
    let loads = 0;
    let release: (value: number) => void = () => {};
    const cache = createTtlCache<string, number>({ ttlMs: 1000 });
    const load = () => {
      loads++;
      return new Promise<number>((resolve) => {
        release = resolve;
      });
    };
    const all = Promise.all([cache.get("k", load), cache.get("k", load), cache.get("k", load)]);
    release(7);
    expect(await all).toEqual([7, 7, 7]);
    expect(loads).toBe(1);
  });

  test("behavior: a failed load is not cached", async () => {
    const cache = createTtlCache<string, number>({ ttlMs: 1000 });
    await expect(cache.get("k", async () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(cache.size).toBe(0);
    expect(await cache.get("k", async () => 3)).toBe(3);
  });

  test("args: maxEntries drops the oldest keys", async () => {
    const cache = createTtlCache<number, number>({ ttlMs: 60_000, maxEntries: 2 });
    for (const key of [1, 2, 3]) await cache.get(key, async () => key * 10);
    expect(cache.size).toBe(2);
    let reloaded = false;
    expect(
      await cache.get(1, async () => {
        reloaded = true;
        return 11;
      }),
    ).toBe(11);
    expect(reloaded).toBe(true);
    expect(await cache.get(3, async () => 0)).toBe(30);
  });

  test("behavior: with refreshAheadMs, a value is served while it is read again in the background", async () => {
    let clock = 0;
    let loads = 0;
    let release: (value: number) => void = () => {};
    const cache = createTtlCache<string, number>({ ttlMs: 5000, refreshAheadMs: 4000, now: () => clock });
    const load = () => {
      loads++;
      return new Promise<number>((resolve) => {
        release = resolve;
      });
    };
    const first = cache.get("a", load);
    release(1);
    expect(await first).toBe(1);
    clock = 3999;
    expect(await cache.get("a", load)).toBe(1);
    expect(loads).toBe(1);
    clock = 4000;
    // Served at once, and one background load started; further readers neither wait nor load again.
    expect(await cache.get("a", load)).toBe(1);
    expect(await cache.get("a", load)).toBe(1);
    expect(loads).toBe(2);
    release(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cache.get("a", load)).toBe(2);
    // The refreshed value expires ttlMs after its load started (4000), not after the first one.
    clock = 8999;
    expect(await cache.get("a", load)).toBe(2);
    expect(loads).toBe(3); // past 4000 + 4000: refreshing again in the background
    clock = 9000;
    const expired = cache.get("a", load);
    release(3);
    expect(await expired).toBe(3);
  });

  test("behavior: a failed background refresh keeps the value until it expires, then loads again", async () => {
    let clock = 0;
    let fail = false;
    let loads = 0;
    const cache = createTtlCache<string, number>({ ttlMs: 5000, refreshAheadMs: 1000, now: () => clock });
    const load = async () => {
      loads++;
      if (fail) throw new Error("node down");
      return loads;
    };
    expect(await cache.get("a", load)).toBe(1);
    fail = true;
    clock = 1000;
    expect(await cache.get("a", load)).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cache.get("a", load)).toBe(1); // the failed refresh may be tried again
    clock = 5000;
    await expect(cache.get("a", load)).rejects.toThrow("node down");
  });
});
