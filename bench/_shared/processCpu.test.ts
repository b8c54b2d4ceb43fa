import { describe, expect, test } from "vitest";
import { cpuSeconds, parseProcStatCpu } from "./processCpu.ts";

describe("parseProcStatCpu", () => {
  test("default", () => {
    const stat = "1234 (node) S 1 1234 1234 0 -1 4194560 5000 0 0 0 250 75 0 0 20 0 11 0 100 0 0";
    expect(parseProcStatCpu(stat)).toBe(3.25);
  });

  test("args: a command name with spaces and parentheses", () => {
    const stat = "99 (my (odd) cmd) R 1 99 99 0 -1 0 0 0 0 0 10 10 0 0 20 0 1 0 1 0 0";
    expect(parseProcStatCpu(stat)).toBe(0.2);
  });

  test("error: not a stat line", () => {
    expect(() => parseProcStatCpu("garbage")).toThrow();
  });
});

describe("cpuSeconds", () => {
  test("default: this process has used some CPU", async () => {
    expect(await cpuSeconds(process.pid)).toBeGreaterThan(0);
  });

  test("error: no such process", async () => {
    expect(await cpuSeconds(2 ** 22 + 1)).toBe(0);
  });
});
