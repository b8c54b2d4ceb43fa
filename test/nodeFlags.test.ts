import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { NODE_FLAGS } from "../scripts/nodeFlags.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = fileURLToPath(new URL("../bin/protoscan.js", import.meta.url));

describe("NODE_FLAGS", () => {
  it("start, demo, migrate and bench:api scripts give Node the options protoscan is started with", () => {
    const { scripts } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      scripts: Record<string, string>;
    };
    for (const command of ["start", "demo", "migrate"]) {
      expect(scripts[command]).toBe(`node ${NODE_FLAGS.join(" ")} bin/protoscan.js ${command}`);
    }
    // bench:api serves the API from its own process: it runs as protoscan would.
    expect(scripts["bench:api"]).toBe(`node ${NODE_FLAGS.join(" ")} --import tsx bench/api.ts`);
  });

  it("bin/protoscan.js run as a program (npx, a PATH install) gets them from its shebang", async () => {
    expect(readFileSync(BIN, "utf8").split("\n")[0]).toBe(`#!/usr/bin/env -S node ${NODE_FLAGS.join(" ")}`);
    // The options reach Node: a module preloaded through NODE_OPTIONS prints the process' own.
    const preload = "process.stderr.write(JSON.stringify(process.execArgv) + '\\n')";
    const { stdout, stderr } = await run(BIN, ["--help"], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(preload)}` },
    });
    expect(stdout).toContain("Usage: protoscan");
    expect(JSON.parse(stderr.split("\n")[0]!)).toEqual(NODE_FLAGS);
  });
});
