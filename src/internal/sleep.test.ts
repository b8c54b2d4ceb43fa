import { getEventListeners } from "node:events";
import { expect, test } from "vitest";
import { sleep } from "./sleep.ts";

test("default: resolves after the delay", async () => {
  const started = performance.now();
  await sleep(30);
  expect(performance.now() - started).toBeGreaterThanOrEqual(25);
});

test("behavior: concurrent sleeps on one signal share one abort listener, removed when they end", async () => {
  const controller = new AbortController();
  const sleeps = Array.from({ length: 50 }, (_, i) => sleep(10 + i, controller.signal));
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
  await Promise.all(sleeps);
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  // and again, once the first group is gone
  const again = sleep(5, controller.signal);
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
  await again;
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
});

test("error: an abort rejects every pending sleep with its reason", async () => {
  const controller = new AbortController();
  const short = sleep(5, controller.signal);
  const pending = Array.from({ length: 20 }, () => sleep(60_000, controller.signal));
  await short;
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
  const reason = new Error("shutting down");
  controller.abort(reason);
  const outcomes = await Promise.allSettled(pending);
  expect(outcomes.every((o) => o.status === "rejected" && o.reason === reason)).toBe(true);
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
});

test("error: an aborted signal rejects at once", async () => {
  const controller = new AbortController();
  controller.abort(new Error("gone"));
  await expect(sleep(60_000, controller.signal)).rejects.toThrow("gone");
});
