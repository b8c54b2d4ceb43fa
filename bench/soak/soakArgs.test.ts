import { expect, test } from "vitest";
import { parseSoakArgs } from "./soakArgs.ts";

test("default", () => {
  expect(parseSoakArgs([])).toEqual({
    durationSeconds: 600,
    windowSeconds: 60,
    rate: 100,
    wsClients: 20,
    churnMs: 1000,
    webhookMs: 4000,
    jsonPath: null,
  });
});

test("args: --minutes, --rate, --json", () => {
  const args = parseSoakArgs(["--minutes", "30", "--rate", "50", "--json", "out.json"]);
  expect(args.durationSeconds).toBe(1800);
  expect(args.windowSeconds).toBe(60);
  expect(args.rate).toBe(50);
  expect(args.jsonPath).toBe("out.json");
});

test("args: --seconds picks a window of a sixth of the run", () => {
  expect(parseSoakArgs(["--seconds", "120"])).toMatchObject({ durationSeconds: 120, windowSeconds: 20 });
  expect(parseSoakArgs(["--seconds", "15"])).toMatchObject({ durationSeconds: 15, windowSeconds: 5 });
});

test("args: --smoke", () => {
  expect(parseSoakArgs(["--smoke"])).toMatchObject({ durationSeconds: 60, windowSeconds: 10 });
});

test("error: fewer than three windows", () => {
  expect(() => parseSoakArgs(["--seconds", "60", "--window", "30"])).toThrow(/at least three windows/);
});

test("error: bad values", () => {
  expect(() => parseSoakArgs(["--minutes", "0"])).toThrow(/not a positive integer: 0/);
  expect(() => parseSoakArgs(["--rate", "2.5"])).toThrow(/not a positive integer: 2.5/);
  expect(() => parseSoakArgs(["--rate"])).toThrow(/--rate needs a value/);
  expect(() => parseSoakArgs(["--fast"])).toThrow(/unknown argument --fast/);
  expect(() => parseSoakArgs(["--help"])).toThrow(/usage: npm run bench:soak/);
});
