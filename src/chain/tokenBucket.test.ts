import { describe, expect, test } from "vitest";
import { createTokenBucket } from "./tokenBucket.ts";

describe("createTokenBucket", () => {
  test("default: a burst of one second's worth, then the rate", async () => {
    const bucket = createTokenBucket({ ratePerSecond: 20 });
    const started = performance.now();
    await Promise.all(Array.from({ length: 30 }, () => bucket.take()));
    const elapsed = performance.now() - started;
    // 20 immediately, the next 10 at 50 ms intervals.
    expect(elapsed).toBeGreaterThanOrEqual(480);
    expect(elapsed).toBeLessThan(1500);
  });

  test("args: capacity 1 spaces every call", async () => {
    const bucket = createTokenBucket({ ratePerSecond: 10, capacity: 1 });
    const started = performance.now();
    for (let i = 0; i < 4; i++) await bucket.take();
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  test("error: abort while waiting at a fractional rate", async () => {
    const bucket = createTokenBucket({ ratePerSecond: 0.5 });
    await bucket.take();
    const controller = new AbortController();
    const waiting = bucket.take(controller.signal);
    setTimeout(() => controller.abort(new Error("stop")), 20);
    await expect(waiting).rejects.toThrow("stop");
  });

  test("behavior: an aborted wait gives its reservation back", async () => {
    let clock = 0;
    const bucket = createTokenBucket({ ratePerSecond: 1, capacity: 1, now: () => clock });
    await bucket.take();
    const controller = new AbortController();
    controller.abort(new Error("shutdown"));
    await expect(bucket.take(controller.signal)).rejects.toThrow("shutdown");
    clock = 1000;
    await bucket.take(); // would wait 1 s more if the aborted reservation had been kept
  });
});
