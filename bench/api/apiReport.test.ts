import { describe, expect, test } from "vitest";
import { formatTable, judge, type Measured, medianOfRounds } from "./apiReport.ts";
import type { Endpoint } from "./endpoints.ts";

const endpoint = (key: string, ceiling?: "node" | "fastify"): Endpoint => ({
  key,
  label: key,
  paths: ["/"],
  p99TargetMs: ceiling ? null : 25,
  minCeilingRatio: ceiling ? null : 0.5,
  ...(ceiling ? { ceiling } : {}),
});
const measured = (e: Endpoint, requestsPerSecond: number, p99: number, cpu = 10, non2xx = 0): Measured => ({
  endpoint: e,
  result: {
    id: 1,
    requestsPerSecond,
    p50: 1,
    p90: 2,
    p99,
    max: p99 * 2,
    bytesPerResponse: 2000,
    bodyBytes: 1800,
    requests: requestsPerSecond,
    non2xx,
    errors: 0,
    timeouts: 0,
    cpuMicrosPerRequest: cpu,
  },
});

describe("bench:api report", () => {
  const node = endpoint("ceilingNodeTx", "node");
  const fastify = endpoint("ceilingTx", "fastify");
  const tx = endpoint("tx");

  test("default: rounds merge into their medians; counts add up, so an error in one round stays an error", () => {
    const [merged] = medianOfRounds([
      [measured(tx, 100, 5)],
      [measured(tx, 900, 40, 10, 3)],
      [measured(tx, 300, 7)],
    ]);
    expect(merged!.result).toMatchObject({
      requestsPerSecond: 300,
      p99: 7,
      max: 80,
      requests: 1300,
      non2xx: 3,
    });
  });

  test("default: the ratio is judged against the node:http ceiling; Fastify's and CPU's are information", () => {
    const verdicts = judge([
      measured(node, 1000, 3, 10),
      measured(fastify, 800, 3, 12),
      measured(tx, 450, 9, 25),
    ]);
    const v = verdicts.find((x) => x.measured.endpoint.key === "tx")!;
    expect(v).toMatchObject({ ratio: 0.45, status: "MISS", cpuRatio: 0.4 });
    expect(v.fastifyRatio).toBeCloseTo(0.5625);
    expect(v.misses).toEqual(["45% of the node:http ceiling < 50%"]);
  });

  test("paired: the ratio is the median of the rounds' shares of the ceiling measured right before", () => {
    const paired = { ...tx, pairedCeiling: "ceilingNodeTx" as const };
    // The round's first ceiling (1000 req/s) would make 450 a MISS; beside the endpoint it ran at 800, 900, 600.
    const verdicts = judge(
      [measured(node, 1000, 3, 10), measured(fastify, 800, 3, 12), measured(paired, 450, 9, 25)],
      new Map([["tx", [450 / 800, 450 / 900, 450 / 600]]]),
    );
    const v = verdicts.find((x) => x.measured.endpoint.key === "tx")!;
    expect(v.ratio).toBeCloseTo(0.5625);
    expect(v.pairedRatios).toHaveLength(3);
    expect(v.ceiling?.endpoint.key).toBe("ceilingNodeTx");
    expect(v.status).toBe("PASS");
    const missed = judge([measured(node, 1000, 3), measured(paired, 450, 9)], new Map([["tx", [0.45, 0.3]]]));
    expect(missed[1]!.misses).toEqual(["38% of the node:http ceiling measured beside it < 50%"]);
    expect(formatTable(missed)).toContain(
      "paired  tx: 45%, 30% of the ceiling measured right before it, by round (median 38%)",
    );
  });
});
