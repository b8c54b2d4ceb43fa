import { getEventListeners } from "node:events";
import { describe, expect, test } from "vitest";
import { createBackgroundLoop } from "./backgroundLoop.ts";

describe("createBackgroundLoop", () => {
  test("default: runs the body once until stop(), which waits for it to end", async () => {
    const shutdown = new AbortController();
    const background = createBackgroundLoop(shutdown);
    let turns = 0;
    let ended = false;
    const body = async (signal: AbortSignal) => {
      while (!signal.aborted) {
        turns++;
        await background.pause(5);
      }
      ended = true;
    };
    expect(background.start(body)).toBe(true);
    expect(background.start(body)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 30));
    await background.stop();
    expect(ended).toBe(true);
    expect(turns).toBeGreaterThan(1);
    expect(background.signal.aborted).toBe(true);
  });

  test("behavior: the shutdown stops it and cuts a pause short", async () => {
    const shutdown = new AbortController();
    const background = createBackgroundLoop(shutdown);
    const started = Date.now();
    let paused: Promise<void> | undefined;
    background.start(async () => {
      paused = background.pause(60_000);
      await paused;
    });
    shutdown.abort();
    await background.stop();
    await expect(paused).resolves.toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test("behavior: stop() removes its shutdown listener", async () => {
    const shutdown = new AbortController();
    const background = createBackgroundLoop(shutdown);
    expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(1);
    await background.stop();
    expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(0);
  });
});
