import { describe, expect, test } from "vitest";
import type { FanoutClientsResult } from "./fanoutClients.ts";
import { fanoutLatency } from "./fanoutLatency.ts";

const A = `0x${"aa".repeat(32)}`;
const B = `0x${"bb".repeat(32)}`;
const C = `0x${"cc".repeat(32)}`;

const processOf = (clients: number, arrivals: Record<string, (number | null)[]>): FanoutClientsResult => ({
  clients,
  arrivals,
  closed: [],
});

describe("fanoutLatency", () => {
  test("default: spread from each event's first arrival, burst from its block's", () => {
    const results = [
      processOf(2, { [A]: [1000, 1010], [B]: [1020, 1040] }),
      processOf(1, { [A]: [1005], [B]: [1030] }),
    ];
    const figures = fanoutLatency(results, [[A, B]]);
    // A: 0, 10, 5; B: 0, 20, 10 -> sorted 0 0 5 10 10 20
    expect(figures.spread).toMatchObject({ count: 6, p50: 5, max: 20 });
    // from 1000: A 0 10 5, B 20 40 30
    expect(figures.burst).toMatchObject({ count: 6, p50: 10, max: 40 });
    expect(figures).toMatchObject({ events: 2, clients: 3, delivered: 6, expected: 6 });
  });

  test("behavior: blocks are measured apart", () => {
    const results = [processOf(2, { [A]: [1000, 1001], [B]: [2000, 2003] })];
    const figures = fanoutLatency(results, [[A], [B]]);
    expect(figures.burst.max).toBe(3);
    expect(figures.deliveredPerBlock).toEqual([2, 2]);
    expect(figures.spread.max).toBe(3);
  });

  test("behavior: missing arrivals are counted, not measured", () => {
    const results = [processOf(3, { [A]: [1000, null, 1002] })];
    const figures = fanoutLatency(results, [[A, C]]);
    expect(figures).toMatchObject({ events: 2, delivered: 2, expected: 6, deliveredPerBlock: [2] });
    expect(figures.spread.max).toBe(2);
  });

  test("args: hashes in any case", () => {
    const results = [processOf(1, { [A]: [5] })];
    expect(fanoutLatency(results, [[A.toUpperCase().replace("0X", "0x")]]).delivered).toBe(1);
  });

  test("args: events of unlisted blocks are ignored", () => {
    const results = [processOf(1, { [A]: [5], [B]: [900] })];
    expect(fanoutLatency(results, [[A]])).toMatchObject({ events: 1, delivered: 1 });
  });
});
