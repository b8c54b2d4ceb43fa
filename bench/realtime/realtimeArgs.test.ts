import { describe, expect, test } from "vitest";
import { parseRealtimeArgs } from "./realtimeArgs.ts";

describe("parseRealtimeArgs", () => {
  test("default", () => {
    expect(parseRealtimeArgs([])).toEqual({
      samples: 100,
      perBlock: 10,
      clients: 1000,
      clientProcesses: 4,
      txPerBlock: 50,
      warmupSeconds: 5,
      measureSeconds: 20,
      phases: ["polling", "webhook", "track-tx", "fanout"],
      jsonPath: null,
      cpuProfileDir: null,
    });
  });

  test("args: every flag", () => {
    const args = parseRealtimeArgs(
      [
        "--samples",
        "20",
        "--per-block",
        "5",
        "--clients",
        "10",
        "--client-procs",
        "3",
        "--tx-per-block",
        "7",
      ].concat([
        "--warmup",
        "1",
        "--seconds",
        "4",
        "--phases",
        "webhook,fanout",
        "--json",
        "out.json",
        "--cpu-prof",
        "prof",
      ]),
    );
    expect(args).toEqual({
      samples: 20,
      perBlock: 5,
      clients: 10,
      clientProcesses: 3,
      txPerBlock: 7,
      warmupSeconds: 1,
      measureSeconds: 4,
      phases: ["webhook", "fanout"],
      jsonPath: "out.json",
      cpuProfileDir: "prof",
    });
  });

  test("args: more client processes than clients", () => {
    expect(parseRealtimeArgs(["--clients", "2", "--client-procs", "4"]).clientProcesses).toBe(2);
  });

  test("error: unknown phase", () => {
    expect(() => parseRealtimeArgs(["--phases", "polling,gossip"])).toThrow("unknown phase gossip");
  });

  test("error: not a positive integer", () => {
    expect(() => parseRealtimeArgs(["--clients", "0"])).toThrow("--clients: not a positive integer: 0");
    expect(() => parseRealtimeArgs(["--seconds", "2.5"])).toThrow("not a positive integer");
  });

  test("error: missing value, unknown flag, help", () => {
    expect(() => parseRealtimeArgs(["--samples"])).toThrow("--samples needs a value");
    expect(() => parseRealtimeArgs(["--fast"])).toThrow("unknown argument --fast");
    expect(() => parseRealtimeArgs(["--help"])).toThrow("usage: npm run bench:realtime");
  });
});
