import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { loadConfig } from "../config/loadConfig.ts";
import { createSilentLogger } from "../internal/logger.ts";
import { findFreePort, isPortFree } from "./anvil.ts";
import { createJsonRpc } from "./demoClient.ts";
import { runDemo, type StartedProtoscan } from "./runDemo.ts";

const dataDir = await mkdtemp(join(tmpdir(), "protoscan-rundemo-"));
afterAll(() => rm(dataDir, { recursive: true, force: true }));

/**
 * Stands in for the CLI's protoscan: loads the generated config with the real loader, checks it against the
 * chain, and serves HTTP on a free port.
 */
function fakeProtoscan(log: string[]) {
  return async (configPath: string): Promise<StartedProtoscan> => {
    const config = await loadConfig({ path: configPath, env: {} });
    const rpc = createJsonRpc(config.rpc.urls[0]!);
    expect(Number(await rpc("eth_chainId"))).toBe(config.chain.id);
    const server = createServer((_, res) => res.end("{}"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    log.push(`start ${config.protocols.map((p) => p.id).join(",")}`);
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      async stop() {
        // anvil must still be up when protoscan stops (reverse order)
        log.push(`stop protoscan, chain up: ${(await rpc("eth_chainId")) === "0x7a69"}`);
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  };
}

test("default", async () => {
  const log: string[] = [];
  let printed = "";
  const anvilPort = await findFreePort();
  const demo = await runDemo({
    host: "127.0.0.1",
    port: 3000,
    dataDir,
    logger: createSilentLogger(),
    startProtoscan: fakeProtoscan(log),
    anvilPort,
    activityIntervalMs: 50,
    print: (text) => {
      printed += text;
    },
  });
  try {
    expect(demo.rpcUrl).toBe(`http://127.0.0.1:${anvilPort}`);
    expect(demo.configPath).toBe(join(dataDir, "protoscan.demo.yaml"));
    expect(log).toEqual(["start demoswap,demovault"]);
    const saved = JSON.parse(await readFile(join(dataDir, "demo-deployment.json"), "utf8"));
    expect(saved).toEqual(demo.deployment);

    const api = printed.match(/API +(http:\/\/127\.0\.0\.1:\d+)\/api\/overview/)?.[1];
    expect(api).toBeDefined();
    expect(printed).toContain(`${api}/docs`);
    expect(printed).toContain(`${api!.replace("http", "ws")}/ws`);
    expect(printed).toContain(`${demo.rpcUrl}  (chain 31337)`);
    expect(printed).toContain("0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"); // the router, EIP-55

    // activity keeps the chain moving
    const rpc = createJsonRpc(demo.rpcUrl);
    const head = Number(await rpc("eth_blockNumber"));
    await new Promise((r) => setTimeout(r, 1000));
    expect(Number(await rpc("eth_blockNumber"))).toBeGreaterThan(head + 3);
  } finally {
    await demo.stop();
  }
  expect(log).toEqual(["start demoswap,demovault", "stop protoscan, chain up: true"]);
  expect(await isPortFree(anvilPort)).toBe(true);
  await demo.stop(); // idempotent
});

test("behavior: memory:// data dir writes the config to a temp folder", async () => {
  const log: string[] = [];
  const demo = await runDemo({
    host: "127.0.0.1",
    port: 3000,
    dataDir: "memory://",
    logger: createSilentLogger(),
    startProtoscan: fakeProtoscan(log),
    anvilPort: await findFreePort(),
    activityIntervalMs: 60_000,
    print: () => {},
  });
  try {
    expect(demo.configPath).toBe(join(tmpdir(), `protoscan-demo-${process.pid}`, "protoscan.demo.yaml"));
    expect((await loadConfig({ path: demo.configPath, env: {} })).chain.id).toBe(31337);
  } finally {
    await demo.stop();
    await rm(join(tmpdir(), `protoscan-demo-${process.pid}`), { recursive: true, force: true });
  }
});

test("error: protoscan fails to start, anvil is stopped", async () => {
  const anvilPort = await findFreePort();
  await expect(
    runDemo({
      host: "127.0.0.1",
      port: 3000,
      dataDir,
      logger: createSilentLogger(),
      startProtoscan: async () => {
        throw new Error("port 3000 taken");
      },
      anvilPort,
      print: () => {},
    }),
  ).rejects.toThrow("port 3000 taken");
  expect(await isPortFree(anvilPort)).toBe(true);
});
