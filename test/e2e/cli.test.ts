import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { findFreePort } from "../../src/demo/anvil.ts";

const BIN = join(import.meta.dirname, "../../bin/protoscan.js");

type Run = { code: number | null; stdout: string; stderr: string };

/** Run the CLI to completion with a clean environment (plus `env`). */
function run(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`protoscan ${args.join(" ")} did not exit in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function waitFor(url: string, timeoutMs: number, until: (body: unknown) => boolean = () => true) {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.ok) {
        last = await response.json();
        if (until(last)) return last;
      }
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer as expected in ${timeoutMs} ms (last: ${JSON.stringify(last)})`);
}

describe("protoscan CLI", () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test("default: --help lists the commands", async () => {
    const { code, stdout } = await run(["--help"]);
    expect(code).toBe(0);
    for (const command of ["start", "migrate", "demo"]) expect(stdout).toContain(`  ${command}`);
    const start = await run(["start", "--help"]);
    expect(start.code).toBe(0);
    expect(start.stdout).toContain("--role all|api|indexer");
  });

  test("error: unknown command exits 1 with the usage", async () => {
    const { code, stderr } = await run(["frobnicate"]);
    expect(code).toBe(1);
    expect(stderr).toContain("unknown command 'frobnicate'");
  });

  test("error: a config error names the key and exits 2", async () => {
    const dir = await mkdtemp(join(tmpdir(), "protoscan-cli-"));
    dirs.push(dir);
    const path = join(dir, "protoscan.config.yaml");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own ${NAME} interpolation
    await writeFile(path, 'chain: { id: 31337 }\nrpc: { urls: ["${MY_RPC}"] }\n');
    const { code, stderr } = await run(["start"], { PROTOSCAN_CONFIG: path });
    expect(code).toBe(2);
    expect(stderr.trim()).toBe("protoscan: rpc.urls[0]: environment variable MY_RPC is not set");
  });

  test("behavior: SIGTERM while the start-up waits for a node that does not answer stops it, exit 0", async () => {
    const dir = await mkdtemp(join(tmpdir(), "protoscan-cli-"));
    dirs.push(dir);
    const path = join(dir, "protoscan.config.yaml");
    // Nothing listens on port 1: the chain id check is retried until the node answers.
    await writeFile(path, "chain: { id: 31337 }\nrpc: { urls: [http://127.0.0.1:1] }\n");
    const child = spawn(process.execPath, [BIN, "start"], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        PROTOSCAN_CONFIG: path,
        DATA_DIR: "memory://",
        PORT: "0",
      },
    });
    children.push(child);
    let stdout = "";
    child.stdout.on("data", (d) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    while (!stdout.includes("did not answer the chain id check") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(stdout).toContain("start-up: the node did not answer the chain id check; retrying");
    const signalled = Date.now();
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(5_000);
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { msg: string; signal?: string });
    expect(lines.at(-1)).toMatchObject({ msg: "stopped during the start-up", signal: "SIGTERM" });
  }, 90_000);

  test("error: --role api on PGlite is refused with a reason", async () => {
    const dir = await mkdtemp(join(tmpdir(), "protoscan-cli-"));
    dirs.push(dir);
    const path = join(dir, "protoscan.config.yaml");
    await writeFile(path, "chain: { id: 31337 }\nrpc: { urls: [http://127.0.0.1:1] }\n");
    const { code, stderr } = await run(["start", "--role", "api"], {
      PROTOSCAN_CONFIG: path,
      DATA_DIR: "memory://",
    });
    expect(code).toBe(1);
    expect(stderr).toContain("--role api needs PostgreSQL (DATABASE_URL)");
  });

  test("default: demo brings up anvil, the demo protocols and protoscan; SIGINT stops everything", async () => {
    const dir = await mkdtemp(join(tmpdir(), "protoscan-demo-"));
    dirs.push(dir);
    const port = await findFreePort();
    const child = spawn(process.execPath, [BIN, "demo"], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        PORT: String(port),
        DATA_DIR: dir,
      },
    });
    children.push(child);
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));

    const base = `http://127.0.0.1:${port}`;
    expect(await waitFor(`${base}/healthz`, 90_000)).toEqual({ status: "ok" });
    // the activity generator keeps sending; the indexer keeps storing
    const stats = (await waitFor(
      `${base}/api/stats`,
      30_000,
      (b) => (b as { totalTransactions: number }).totalTransactions > 20,
    )) as { totalTransactions: number; protocols: number; trackedTokens: number };
    expect(stats.protocols).toBe(2);
    expect(stats.trackedTokens).toBe(4);
    const rpc = /Anvil RPC\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    expect(rpc).toBeDefined();

    child.kill("SIGINT");
    expect(await exited).toBe(0);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    await expect(fetch(rpc!, { method: "POST", body: "{}" })).rejects.toThrow();
  }, 150_000);
});
