import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { findFreePort } from "../../src/demo/anvil.ts";
import { createJsonRpc } from "../../src/demo/demoClient.ts";

const BIN = join(import.meta.dirname, "../../bin/protoscan.js");

type Demo = {
  child: ChildProcess;
  base: string;
  output(): string;
  exited: Promise<number | null>;
  rpcUrl(): string | undefined;
};

type RecentTx = { txHash: string; blockNumber: number; blockHash: string };

async function getJson(url: string): Promise<unknown> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

async function until<T>(read: () => Promise<T | null>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await read();
      if (value !== null) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what} (last error: ${String(last)})`);
}

describe("`protoscan demo` run again on the same DATA_DIR", () => {
  const children: ChildProcess[] = [];
  let dir: string | undefined;
  afterAll(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function startDemo(dataDir: string): Promise<Demo> {
    const port = await findFreePort();
    const child = spawn(process.execPath, [BIN, "demo"], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        PORT: String(port),
        DATA_DIR: dataDir,
      },
    });
    children.push(child);
    let output = "";
    child.stdout?.on("data", (d) => (output += d));
    child.stderr?.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    return {
      child,
      base: `http://127.0.0.1:${port}`,
      output: () => output,
      exited,
      rpcUrl: () => /Anvil RPC\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1],
    };
  }

  /** The newest stored transactions, once there are at least `atLeast`. */
  async function recent(demo: Demo, atLeast: number): Promise<RecentTx[]> {
    return until(
      async () => {
        const body = (await getJson(`${demo.base}/api/transactions/recent?limit=100`)) as {
          transactions: RecentTx[];
        };
        return body.transactions.length >= atLeast ? body.transactions : null;
      },
      120_000,
      `${atLeast} stored transactions`,
    );
  }

  test("behavior: the second run indexes its own chain from scratch; a concurrent one is refused", async () => {
    dir = await mkdtemp(join(tmpdir(), "protoscan-demo-again-"));
    const first = await startDemo(dir);
    const before = await recent(first, 30);
    first.child.kill("SIGINT");
    expect(await first.exited).toBe(0);

    const second = await startDemo(dir);
    const after = await recent(second, 5);
    const rpcUrl = second.rpcUrl();
    expect(rpcUrl).toBeDefined();
    // Every stored transaction is from the second run's chain: none of the first run's is left.
    const rpc = createJsonRpc(rpcUrl!);
    for (const tx of after) {
      const block = (await rpc("eth_getBlockByNumber", [`0x${tx.blockNumber.toString(16)}`, false])) as {
        hash: string;
      } | null;
      expect({ tx: tx.txHash, blockHash: block?.hash }).toEqual({ tx: tx.txHash, blockHash: tx.blockHash });
    }
    const newest = before[0]!;
    const gone = await fetch(`${second.base}/api/tx/${newest.txHash}`);
    if (gone.status === 200) {
      // The same hash mined again on the new chain (the deployment is deterministic): then in a block of it.
      expect(((await gone.json()) as RecentTx).blockHash).not.toBe(newest.blockHash);
    } else expect(gone.status).toBe(404);

    // A second demo on the same directory while this one runs must not empty its database.
    const third = await startDemo(dir);
    expect(await third.exited).toBe(1);
    expect(third.output()).toContain(
      `DATA_DIR ${dir} is in use by another protoscan process (pid ${second.child.pid}`,
    );
    expect((await getJson(`${second.base}/healthz`)) as unknown).toEqual({ status: "ok" });

    second.child.kill("SIGINT");
    expect(await second.exited).toBe(0);
  }, 400_000);
});
