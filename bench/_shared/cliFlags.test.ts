import { describe, expect, test } from "vitest";
import { parseApiBenchArgs } from "../api/apiBenchArgs.ts";
import { parseBenchArgs } from "../index/benchArgs.ts";
import { parseFlags } from "./cliFlags.ts";

describe("parseFlags", () => {
  const parse = (argv: string[]) => {
    const seen: Record<string, unknown> = {};
    parseFlags(argv, "usage: test", (flag, read) => {
      if (flag === "--n") seen.n = read.integer();
      else if (flag === "--z") seen.z = read.integer(0);
      else if (flag === "--kinds") seen.kinds = read.oneOf(["a", "b"] as const, "kind");
      else if (flag === "--name") seen.name = read.text();
      else if (flag === "--on") seen.on = true;
      else return false;
      return true;
    });
    return seen;
  };

  test("default: each flag's value read in its form, in order", () => {
    expect(parse(["--n", "3", "--z", "0", "--kinds", "b,a", "--name", "x,y", "--on"])).toEqual({
      n: 3,
      z: 0,
      kinds: ["b", "a"],
      name: "x,y",
      on: true,
    });
    expect(parse([])).toEqual({});
  });

  test("error: malformed or missing values, unknown flags and --help throw with the usage", () => {
    expect(() => parse(["--n", "0"])).toThrow("--n: not a positive integer: 0");
    expect(() => parse(["--n", "1.5"])).toThrow("--n: not a positive integer: 1.5");
    expect(() => parse(["--z", "-1"])).toThrow("--z: not an integer >= 0: -1");
    expect(() => parse(["--kinds", "a,c"])).toThrow("--kinds: unknown kind c (a, b)");
    expect(() => parse(["--name"])).toThrow("--name needs a value\nusage: test");
    expect(() => parse(["--fast"])).toThrow("unknown argument --fast\nusage: test");
    expect(() => parse(["-h"])).toThrow("usage: test");
  });
});

describe("bench:index and bench:api command lines", () => {
  test("default: defaults, and flags override them", () => {
    expect(parseBenchArgs([])).toEqual({
      count: 10_000,
      perBlock: 10,
      floorConcurrency: 200,
      phases: null,
      startPhases: null,
      jsonPath: null,
      rounds: 1,
      baseline: null,
    });
    expect(
      parseBenchArgs([
        "--count",
        "20",
        "--phases",
        "floor,start-pglite,postgres",
        "--rounds",
        "3",
        "--baseline",
        "main~2",
      ]),
    ).toMatchObject({
      count: 20,
      phases: ["floor", "postgres"],
      startPhases: ["start-pglite"],
      rounds: 3,
      baseline: "main~2",
    });
    expect(
      parseApiBenchArgs(["--warmup", "0", "--only", "tx,recent", "--data-dir", "d", "--rounds", "3"]),
    ).toMatchObject({
      rounds: 3,
      warmupSeconds: 0,
      only: ["tx", "recent"],
      dataDir: "d",
      seconds: 10,
    });
  });

  test("error: bad values name the flag", () => {
    expect(() => parseBenchArgs(["--phases", "floor,sqlite"])).toThrow("--phases: unknown phase sqlite");
    expect(() => parseApiBenchArgs(["--connections", "0"])).toThrow(
      "--connections: not a positive integer: 0",
    );
  });
});
