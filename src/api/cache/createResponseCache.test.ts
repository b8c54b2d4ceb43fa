import { describe, expect, test } from "vitest";
import type { CachedBody } from "./cachedBody.ts";
import { createResponseCache, ENTRY_OVERHEAD_BYTES } from "./createResponseCache.ts";

describe("createResponseCache", () => {
  test("default: a body is kept until invalidated", () => {
    const cache = createResponseCache({ maxEntries: 10 });
    expect(cache.get("a")).toBeUndefined();
    cache.set("a", '{"n":1}', cache.version());
    expect(cache.get("a")).toBe('{"n":1}');
    cache.invalidate();
    expect(cache.get("a")).toBeUndefined();
    expect(cache.stats()).toEqual({ entries: 0, hits: 1, misses: 2, bytes: 0 });
  });

  test("behavior: a body read before an invalidation is not kept after it", () => {
    const cache = createResponseCache({ maxEntries: 10 });
    const version = cache.version();
    // … the read runs; meanwhile a commit's event arrives …
    cache.invalidate();
    cache.set("a", "stale", version);
    expect(cache.get("a")).toBeUndefined();
    cache.set("a", "fresh", cache.version());
    expect(cache.get("a")).toBe("fresh");
  });

  test("args: doorkeeper keeps a body on its key's second miss, so keys asked for once evict nothing", () => {
    const cache = createResponseCache({ maxEntries: 2, doorkeeper: 3 });
    const ask = (key: string) => {
      const hit = cache.get(key);
      if (hit === undefined) cache.set(key, key, cache.version());
      return hit;
    };
    expect([ask("hot"), ask("hot"), ask("hot")]).toEqual([undefined, undefined, "hot"]);
    // A scan of keys asked for once: none is kept, and the kept one stays.
    for (const key of ["s1", "s2", "s3", "s4", "s5"]) ask(key);
    expect(cache.stats().entries).toBe(1);
    expect(ask("hot")).toBe("hot");
    // The remembered keys are forgotten all at once past `doorkeeper`: s5 was remembered after the reset.
    expect([ask("s5"), ask("s5")]).toEqual([undefined, "s5"]);
    expect(ask("s1")).toBeUndefined();
    expect(cache.get("s1")).toBeUndefined();
    // A kept key that is set again (a newer body) does not knock again.
    cache.set("hot", "hot2", cache.version());
    expect(cache.get("hot")).toBe("hot2");
  });

  test("args: maxEntries drops the oldest body", () => {
    const cache = createResponseCache({ maxEntries: 2 });
    for (const key of ["a", "b", "c"]) cache.set(key, key, cache.version());
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([undefined, "b", "c"]);
    cache.set("b", "b2", cache.version());
    expect(cache.stats().entries).toBe(2);
    expect(cache.get("b")).toBe("b2");
  });

  test("default: through reads once and keeps the value until invalidated", async () => {
    const cache = createResponseCache<{ n: number }>({ maxEntries: 10 });
    let reads = 0;
    const read = async () => ({ n: ++reads });
    expect(await cache.through("a", read)).toEqual({ n: 1 });
    expect(await cache.through("a", read)).toEqual({ n: 1 });
    cache.invalidate();
    expect(await cache.through("a", read)).toEqual({ n: 2 });
  });

  test("behavior: through does not keep a value read across an invalidation", async () => {
    const cache = createResponseCache<number>({ maxEntries: 10 });
    const pending = cache.through("a", async () => {
      cache.invalidate();
      return 1;
    });
    expect(await pending).toBe(1);
    expect(cache.get("a")).toBeUndefined();
  });

  test("args: maxAgeMs bounds how long a body is kept without an event", () => {
    let clock = 0;
    const cache = createResponseCache({ maxEntries: 10, maxAgeMs: 1000, now: () => clock });
    cache.set("a", "body", cache.version());
    clock = 1000;
    expect(cache.get("a")).toBe("body");
    clock = 1001;
    expect(cache.get("a")).toBeUndefined();
  });

  test("behavior: past maxEntries the least recently used body is dropped, not the oldest", () => {
    const cache = createResponseCache({ maxEntries: 2 });
    cache.set("a", "a", cache.version());
    cache.set("b", "b", cache.version());
    expect(cache.get("a")).toBe("a"); // a is now the most recently used
    cache.set("c", "c", cache.version());
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual(["a", undefined, "c"]);
  });

  test("args: maxBytes bounds the bytes kept, each entry counted with its key and overhead", () => {
    const body = (fill: string) => Buffer.alloc(1000, fill);
    const entry = 1000 + 2 * 2 + ENTRY_OVERHEAD_BYTES; // a two-character key
    const cache = createResponseCache<Buffer>({ maxEntries: 1000, maxBytes: 3 * entry });
    for (let i = 10; i < 60; i++) {
      cache.set(String(i), body("x"), cache.version());
      expect(cache.stats().bytes).toBeLessThanOrEqual(3 * entry);
    }
    expect(cache.stats()).toMatchObject({ entries: 3, bytes: 3 * entry });
    const kept = ["56", "57", "58", "59"].filter((k) => cache.get(k) !== undefined);
    expect(kept).toEqual(["57", "58", "59"]);
    // Replacing a body frees the old one's bytes; a body larger than the whole bound is not kept.
    cache.set("59", body("y"), cache.version());
    expect(cache.stats()).toMatchObject({ entries: 3, bytes: 3 * entry });
    cache.set("big", Buffer.alloc(4 * entry), cache.version());
    expect(cache.get("big")).toBeUndefined();
    expect(cache.stats()).toMatchObject({ entries: 3, bytes: 3 * entry });
    cache.invalidate();
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0 });
  });
  test("behavior: replace swaps the kept body for another form of it, recounting bytes, keeping its age", () => {
    let clock = 0;
    const entry = (bytes: number) => bytes + 2 * 2 + ENTRY_OVERHEAD_BYTES; // a two-character key
    const cache = createResponseCache<CachedBody>({
      maxEntries: 10,
      maxBytes: 3 * entry(1000) + 500,
      maxAgeMs: 1000,
      now: () => clock,
    });
    const body = (fill: string): CachedBody => ({ identity: Buffer.alloc(1000, fill) });
    const a = body("a");
    cache.set("aa", a, cache.version());
    cache.set("bb", body("b"), cache.version());
    cache.set("cc", body("c"), cache.version());
    expect(cache.stats().bytes).toBe(3 * entry(1000));
    // A kept body with its 400 compressed bytes: counted, still within the bound.
    clock = 900;
    cache.replace("aa", a, { identity: a.identity, gzip: Buffer.alloc(400) });
    expect(cache.stats()).toMatchObject({ entries: 3, bytes: 3 * entry(1000) + 400 });
    expect(cache.get("aa")?.gzip?.length).toBe(400);
    // Past the bound, the least recently used other entry goes.
    const b = cache.get("bb")!;
    cache.replace("bb", b, { identity: b.identity, gzip: Buffer.alloc(400) });
    expect(cache.get("cc")).toBeUndefined();
    expect(cache.stats()).toMatchObject({ entries: 2, bytes: 2 * entry(1000) + 800 });
    // Nothing when the key holds another body or none (emptied meanwhile).
    cache.replace("aa", a, { identity: a.identity, gzip: Buffer.alloc(1) });
    expect(cache.get("aa")?.gzip?.length).toBe(400);
    cache.invalidate();
    cache.replace("bb", b, { identity: b.identity });
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0 });
    // The age is the set's, not the replace's.
    const d = body("d");
    clock = 0;
    cache.set("dd", d, cache.version());
    clock = 900;
    cache.replace("dd", d, { identity: d.identity, gzip: Buffer.alloc(10) });
    clock = 1001;
    expect(cache.get("dd")).toBeUndefined();
  });
});
