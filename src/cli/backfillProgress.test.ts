import { describe, expect, test } from "vitest";
import { createBackfillMeter, formatCount, formatEta, progressLine } from "./backfillProgress.ts";

describe("formatCount", () => {
  test("rounds and groups thousands with commas, as en-US does", () => {
    const cases: [number, string][] = [
      [0, "0"],
      [12, "12"],
      [999.4, "999"],
      [999.5, "1,000"],
      [1000, "1,000"],
      [1234567.6, "1,234,568"],
      [20_000_000, "20,000,000"],
    ];
    for (const [value, text] of cases) {
      expect(formatCount(value)).toBe(text);
      expect(formatCount(value)).toBe(
        new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 }).format(value),
      );
    }
  });
});

describe("progressLine", () => {
  test("default: blocks done and to do, transactions per second, ETA", () => {
    expect(progressLine({ done: 1234, toDo: 5678, transactionsPerSecond: 41.6, etaSeconds: 133 })).toBe(
      "backfill  1,234 blocks done · 5,678 to do · 42 tx/s · ETA 2m 13s",
    );
  });

  test("behavior: unknown rates read --", () => {
    expect(progressLine({ done: 0, toDo: 20, transactionsPerSecond: null, etaSeconds: null })).toBe(
      "backfill  0 blocks done · 20 to do · -- tx/s · ETA --",
    );
  });
});

describe("formatEta", () => {
  test("default: seconds, minutes, hours", () => {
    expect([formatEta(0), formatEta(45.4), formatEta(125), formatEta(3725), formatEta(null)]).toEqual([
      "0s",
      "45s",
      "2m 05s",
      "1h 02m",
      "--",
    ]);
  });
});

describe("createBackfillMeter", () => {
  const sample = (indexedBlock: number | null, target: number | null, transactions: number, now: number) => ({
    indexedBlock,
    target,
    transactions,
    now,
  });

  test("default: a backfill from start to caught up", () => {
    const meter = createBackfillMeter(10);
    expect(meter.sample(sample(null, 1000, 0, 0))).toBeNull();
    expect(meter.sample(sample(100, 1000, 0, 0))).toEqual({
      done: 0,
      toDo: 900,
      transactionsPerSecond: null,
      etaSeconds: null,
    });
    // 200 blocks and 500 transactions in 2 s: 100 blocks/s, 250 tx/s, 700 blocks to go in 7 s
    expect(meter.sample(sample(300, 1000, 500, 2000))).toEqual({
      done: 200,
      toDo: 700,
      transactionsPerSecond: 250,
      etaSeconds: 7,
    });
    expect(meter.sample(sample(1000, 1000, 900, 4000))).toBeNull();
  });

  test("behavior: a few blocks behind is no backfill; a new one starts from where it is", () => {
    const meter = createBackfillMeter(10);
    expect(meter.sample(sample(995, 1000, 0, 0))).toBeNull();
    expect(meter.sample(sample(1000, 1020, 7, 1000))).toMatchObject({ done: 0, toDo: 20 });
    expect(meter.sample(sample(1010, 1020, 9, 3000))).toEqual({
      done: 10,
      toDo: 10,
      transactionsPerSecond: 1,
      etaSeconds: 2,
    });
  });

  test("behavior: no blocks yet means no ETA", () => {
    const meter = createBackfillMeter(10);
    meter.sample(sample(0, 100, 0, 0));
    expect(meter.sample(sample(0, 100, 0, 5000))).toEqual({
      done: 0,
      toDo: 100,
      transactionsPerSecond: 0,
      etaSeconds: null,
    });
  });
});
