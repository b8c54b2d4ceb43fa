import { describe, expect, test } from "vitest";
import { createInboxSignal } from "./inboxSignal.ts";

describe("createInboxSignal", () => {
  test("default: notify wakes a waiter before its timeout", async () => {
    const signal = createInboxSignal();
    const started = Date.now();
    const waiting = signal.wait(5_000, new AbortController().signal);
    setTimeout(() => signal.notify(), 20);
    await waiting;
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  test("behavior: a notify with nobody waiting makes the next wait return at once, once", async () => {
    const signal = createInboxSignal();
    signal.notify();
    const abort = new AbortController().signal;
    const started = Date.now();
    await signal.wait(5_000, abort);
    expect(Date.now() - started).toBeLessThan(1_000); // far below the 5 s timeout
    const second = Date.now();
    await signal.wait(50, abort);
    expect(Date.now() - second).toBeGreaterThanOrEqual(40);
  });

  test("behavior: abort ends a wait", async () => {
    const signal = createInboxSignal();
    const controller = new AbortController();
    const waiting = signal.wait(60_000, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
  });
});
