import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const ANVIL = fileURLToPath(
  new URL("../../../node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil", import.meta.url),
);

export type TestAnvil = { url: string; port: number; stop(): Promise<void> };

/** A port nobody listens on right now (also used for "connection refused" URLs). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/**
 * Start a private anvil for one test file (until the shared test/helpers/anvil.ts lands): on a free
 * port, under a 4 GB address-space limit, stopped by PID.
 */
export async function startAnvil(options: { chainId?: number } = {}): Promise<TestAnvil> {
  const port = await freePort();
  const args = ["--as=4000000000", ANVIL, "--port", String(port), "--host", "127.0.0.1", "--silent"];
  if (options.chainId !== undefined) args.push("--chain-id", String(options.chainId));
  const child: ChildProcess = spawn("prlimit", args, { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`anvil did not start on port ${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
