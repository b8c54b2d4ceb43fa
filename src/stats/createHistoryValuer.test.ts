import { expect, test, vi } from "vitest";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import { createHistoryValuer, HISTORY_VALUER_IDLE_MS } from "./createHistoryValuer.ts";

const common = () => testCommon(testConfig({ urls: ["http://127.0.0.1:8545"] }));

test("behavior: passes follow each other while they fill up, then it waits; never while busy", async () => {
  vi.useFakeTimers();
  try {
    // 450 stale buckets: passes of 200, 200, 50, then idle until the next look.
    let stale = 450;
    const asked: number[] = [];
    let busy = false;
    const valuer = createHistoryValuer(common(), {
      timeSeries: {
        async valueStale(limit = 500) {
          asked.push(limit);
          const n = Math.min(limit, stale);
          stale -= n;
          return n;
        },
      },
      busy: () => busy,
    });
    valuer.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(asked).toEqual([200, 200, 200]);
    expect(stale).toBe(0);
    busy = true;
    stale = 10;
    await vi.advanceTimersByTimeAsync(HISTORY_VALUER_IDLE_MS * 2);
    expect(asked).toHaveLength(3);
    busy = false;
    await vi.advanceTimersByTimeAsync(HISTORY_VALUER_IDLE_MS);
    expect(asked).toHaveLength(4);
    expect(stale).toBe(0);
    await valuer.stop();
  } finally {
    vi.useRealTimers();
  }
});

test("error: a failing pass is logged and retried after the wait", async () => {
  vi.useFakeTimers();
  try {
    let calls = 0;
    const valuer = createHistoryValuer(common(), {
      timeSeries: {
        async valueStale() {
          calls++;
          if (calls === 1) throw new Error("database away");
          return 0;
        },
      },
    });
    valuer.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(HISTORY_VALUER_IDLE_MS);
    expect(calls).toBe(2);
    await valuer.stop();
  } finally {
    vi.useRealTimers();
  }
});
