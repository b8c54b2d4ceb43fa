import { execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createPublicClient, http } from "viem";
import { expect, test } from "vitest";
import { anvilBinaryPath, findFreePort, isPortFree, startAnvil } from "./anvil.ts";
import { createJsonRpc } from "./demoClient.ts";
import { DEV_ACCOUNTS } from "./devAccounts.ts";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // a zombie still answers signal 0: look at its state
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

test("default", async () => {
  const anvil = await startAnvil();
  try {
    expect(anvil.url).toBe(`http://127.0.0.1:${anvil.port}`);
    expect(isAlive(anvil.pid)).toBe(true);
    const client = createPublicClient({ transport: http(anvil.url) });
    expect(await client.getChainId()).toBe(31337);
    expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(0n);
    // automine: a transaction is mined at once
    const rpc = createJsonRpc(anvil.url);
    const hash = await rpc("eth_sendTransaction", [
      { from: DEV_ACCOUNTS[0], to: DEV_ACCOUNTS[1], value: "0x1" },
    ]);
    expect(typeof hash).toBe("string");
    // anvil may answer the hash just before its automined block is in: wait briefly, never mine by hand.
    const deadline = Date.now() + 10_000;
    while ((await client.getBlockNumber({ cacheTime: 0 })) < 1n && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(1n);
  } finally {
    await anvil.stop();
  }
  expect(isAlive(anvil.pid)).toBe(false);
  expect(await isPortFree(anvil.port)).toBe(true);
  await anvil.stop(); // idempotent
});

test("args: port, chainId, noMining", async () => {
  const port = await findFreePort();
  const anvil = await startAnvil({ port, chainId: 1337, noMining: true });
  try {
    expect(anvil.port).toBe(port);
    const rpc = createJsonRpc(anvil.url);
    expect(await rpc("eth_chainId")).toBe("0x539");
    await rpc("eth_sendTransaction", [{ from: DEV_ACCOUNTS[0], to: DEV_ACCOUNTS[1], value: "0x1" }]);
    expect(await rpc("eth_blockNumber")).toBe("0x0");
    await rpc("anvil_mine", ["0x1"]);
    expect(await rpc("eth_blockNumber")).toBe("0x1");
  } finally {
    await anvil.stop();
  }
});

test("args: blockTime and extraArgs", async () => {
  const anvil = await startAnvil({ blockTime: 1, extraArgs: ["--accounts", "2"] });
  try {
    const rpc = createJsonRpc(anvil.url);
    expect(await rpc("eth_accounts")).toEqual(DEV_ACCOUNTS.slice(0, 2));
    await new Promise((resolve) => setTimeout(resolve, 2200));
    expect(Number(await rpc("eth_blockNumber"))).toBeGreaterThanOrEqual(2);
  } finally {
    await anvil.stop();
  }
});

test("error: port in use", async () => {
  const first = await startAnvil();
  try {
    await expect(startAnvil({ port: first.port })).rejects.toThrow(`port ${first.port} is already in use`);
  } finally {
    await first.stop();
  }
});

test("error: anvil refuses its arguments", async () => {
  await expect(startAnvil({ extraArgs: ["--no-such-flag"] })).rejects.toThrow(
    "anvil exited before answering",
  );
});

test("behavior: binary resolves from any cwd", () => {
  expect(anvilBinaryPath()).toMatch(/node_modules\/@foundry-rs\/anvil-linux-amd64\/bin\/anvil$/);
});

test("behavior: anvil dies with the process that started it, even when it is SIGKILLed", async () => {
  const script = `
    const { startAnvil } = await import(${JSON.stringify(fileURLToPath(new URL("./anvil.ts", import.meta.url)))});
    const anvil = await startAnvil();
    console.log(anvil.pid);
    setInterval(() => {}, 1000); // until killed
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    const pid = await new Promise<number>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const line = /^(\d+)\n/.exec(out);
        if (line) resolve(Number(line[1]));
      });
      child.once("exit", () => reject(new Error(`the child exited first: ${out}`)));
    });
    expect(isAlive(pid)).toBe(true);
    // anvil is a process of its own (prlimit execs it): it is the anvil binary that answers on that pid.
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]).toBe(anvilBinaryPath());
    child.kill("SIGKILL"); // no exit handler of the child runs
    await exited;
    const deadline = Date.now() + 10_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(isAlive(pid)).toBe(false);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
});

test("behavior: anvil dies with the process that started it", async () => {
  const script = `
    const { startAnvil } = await import(${JSON.stringify(fileURLToPath(new URL("./anvil.ts", import.meta.url)))});
    const anvil = await startAnvil();
    console.log(anvil.pid);
    process.exit(0); // no stop()
  `;
  const { stdout } = await promisify(execFile)(process.execPath, [
    "--import",
    "tsx",
    "--input-type=module",
    "-e",
    script,
  ]);
  const pid = Number(stdout.trim());
  expect(pid).toBeGreaterThan(0);
  await new Promise((r) => setTimeout(r, 200));
  expect(isAlive(pid)).toBe(false);
});
