import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { NODE_FLAGS } from "../../scripts/nodeFlags.js";
import type { ConfigFile } from "../../src/config/schema.ts";
import { writeDemoConfig } from "../../src/demo/demoConfig.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";

// SPEC §12: on a terminal, readable log lines and a live backfill progress line; JSON otherwise. The CLI runs
// under a pseudo-terminal made by util-linux `script`, the way a person starts it in a shell.

const BIN = fileURLToPath(new URL("../../bin/protoscan.js", import.meta.url));
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const BACKFILL_BLOCKS = 400;

const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences are what is being removed
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

type Run = { child: ChildProcess; output(): string; exited: Promise<number | null> };

/** Start `protoscan start` with `env` (and none of the runner's protoscan variables), optionally under a pty. */
function startCli(env: Record<string, string>, pty: boolean): Run {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" };
  const command = [process.execPath, ...NODE_FLAGS, BIN, "start"];
  const child = pty
    ? // -q quiet, -f flush each write, -e exit with the child's code, -c the command; no typescript file.
      // The terminal gets a size (a pty made without one is 0 columns wide); exec, so that Ctrl-C reaches
      // protoscan and not a shell waiting for it.
      spawn(
        "script",
        ["-qfec", `stty cols 200 rows 50; exec ${command.map((a) => `'${a}'`).join(" ")}`, "/dev/null"],
        {
          cwd: REPO,
          env: { ...base, ...env, TERM: "xterm" },
          stdio: ["pipe", "pipe", "pipe"],
        },
      )
    : spawn(command[0]!, command.slice(1), {
        cwd: REPO,
        env: { ...base, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString("utf8")));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

async function until(check: () => boolean, timeoutMs: number, what: string, run: Run): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`${what} not seen in ${timeoutMs} ms; output:\n${run.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("the terminal face", () => {
  let chain: DemoChain;
  let tmp: string;
  let configPath: string;
  let head: number;
  const runs: Run[] = [];

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), "protoscan-terminal-"));
    chain = await setupDemoChain();
    // Empty blocks to backfill, read 10 at a time under a request ceiling: a few seconds of progress line.
    await rpc(chain.anvil.url, "anvil_mine", [`0x${BACKFILL_BLOCKS.toString(16)}`]);
    head = Number(await rpc(chain.anvil.url, "eth_blockNumber", []));
    const file: ConfigFile = {
      ...chain.configFile,
      rpc: { ...chain.configFile.rpc, maxRequestsPerSecond: 40 },
      indexer: { ...chain.configFile.indexer, logChunkBlocks: 10, pollIntervalSeconds: 1 },
    };
    configPath = path.join(tmp, "protoscan.yaml");
    await writeDemoConfig(configPath, file);
  }, 120_000);

  afterAll(async () => {
    for (const run of runs) if (run.child.exitCode === null) run.child.kill("SIGKILL");
    await chain?.anvil.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const env = () => ({ PROTOSCAN_CONFIG: configPath, DATA_DIR: "memory://", PORT: "0" });

  test.skipIf(!hasScript)(
    "default: on a terminal, readable lines and a live progress line; Ctrl-C stops it",
    async () => {
      const run = startCli(env(), true);
      runs.push(run);
      const text = () => run.output().replace(ANSI, "");
      await until(() => /INFO.*: protoscan is listening/.test(text()), 60_000, "the listening line", run);
      await until(() => /indexer cycle done/.test(text()), 60_000, "the end of the backfill", run);
      // Ctrl-C typed into the terminal reaches protoscan as SIGINT
      run.child.stdin?.write("\x03");
      expect(await run.exited).toBe(0);

      const out = text();
      // readable lines: time, level, message, the fields indented below; no JSON line
      expect(out).toMatch(/\[\d\d:\d\d:\d\d\.\d{3}\] INFO: protoscan is listening/);
      expect(out).toMatch(/\n\s+url: "http:\/\/127\.0\.0\.1:\d+"/);
      expect(out).not.toMatch(/^\{"level"/m);
      // the progress line, drawn in place (carriage return + erase line) with blocks done / to do, tx/s, ETA
      const progress = [
        ...out.matchAll(
          /\r(backfill {2}([\d,]+) blocks done · ([\d,]+) to do · (--|[\d,]+) tx\/s · ETA (\S+(?: \S+)?))/g,
        ),
      ];
      expect(progress.length).toBeGreaterThan(0);
      // blocks to do never exceed the chain and shrink as blocks get done (the backfill is the only one)
      const done = progress.map((m) => Number(m[2]!.replaceAll(",", "")));
      const toDo = progress.map((m) => Number(m[3]!.replaceAll(",", "")));
      expect(Math.max(...toDo)).toBeLessThanOrEqual(head);
      expect(Math.min(...toDo)).toBeGreaterThan(0);
      expect(done).toEqual([...done].sort((a, b) => a - b));
      expect(toDo).toEqual([...toDo].sort((a, b) => b - a));
      expect(out).toMatch(/INFO: stopped/);
    },
    150_000,
  );

  test("behavior: piped, LOG_FORMAT=pretty gives readable lines without colours or a progress line", async () => {
    const run = startCli({ ...env(), LOG_FORMAT: "pretty" }, false);
    runs.push(run);
    await until(() => /INFO: protoscan is listening/.test(run.output()), 60_000, "the listening line", run);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    const out = run.output();
    expect(out).not.toMatch(ANSI);
    expect(out).not.toContain("blocks done");
    expect(out).not.toMatch(/^\{"level"/m);
    expect(out).toMatch(/INFO: stopped/);
  }, 90_000);

  test("behavior: piped, the lines stay pino JSON", async () => {
    const run = startCli(env(), false);
    runs.push(run);
    await until(
      () => run.output().includes('"msg":"protoscan is listening"'),
      60_000,
      "the listening line",
      run,
    );
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    const lines = run.output().trim().split("\n");
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain("stopped");
  }, 90_000);

  test("error: an unknown LOG_FORMAT stops the start with exit code 2, naming it", async () => {
    const run = startCli({ ...env(), LOG_FORMAT: "text" }, false);
    runs.push(run);
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain("LOG_FORMAT: must be pretty or json (got 'text')");
  }, 60_000);
});
