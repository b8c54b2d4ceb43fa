import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { NonRetryableError } from "../internal/errors.ts";

export type StartAnvilOptions = {
  /** TCP port on 127.0.0.1 (default: a free port). */
  port?: number;
  /** Interval mining: one block every `blockTime` seconds. Without it (and without `noMining`), automine. */
  blockTime?: number;
  /** Mine only on `anvil_mine` / `evm_mine`. */
  noMining?: boolean;
  /** Address-space ceiling applied with `prlimit --as=` (default 4e9 bytes). */
  memoryLimitBytes?: number;
  /** Default 31337. */
  chainId?: number;
  /** Passed to anvil as they are, after ours. */
  extraArgs?: readonly string[];
  /** How long to wait for `eth_chainId` to answer (default 15 s). */
  startTimeoutMs?: number;
};

export type Anvil = {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  pid: number;
  /** Kill the process (SIGTERM, then SIGKILL after 5 s) and wait until it has exited. Idempotent. */
  stop(): Promise<void>;
};

const require = createRequire(import.meta.url);

/** Absolute path of the anvil binary shipped by `@foundry-rs/anvil-linux-amd64`, whatever the cwd. */
export function anvilBinaryPath(): string {
  return join(dirname(require.resolve("@foundry-rs/anvil-linux-amd64/package.json")), "bin", "anvil");
}

/**
 * Start a local anvil node (https://getfoundry.sh/anvil) and resolve once `eth_chainId` answers.
 *
 * The node runs under `prlimit --as=<memoryLimitBytes>` (prlimit execs anvil, so `pid` is anvil's own) with
 * `--silent`, started by a small `sh` watchdog (`WATCHDOG`) that kills it when this process is gone, however it
 * ended (SIGKILL included). It is killed by `stop()`, and also when this process exits.
 *
 * Known anvil bug: many transactions sent concurrently in automine mode can hang it. Send them one at a
 * time, or start with `noMining` and call `anvil_mine`.
 */
export async function startAnvil(options: StartAnvilOptions = {}): Promise<Anvil> {
  // A port found free can be taken before anvil binds it; with an automatic port, try again on a new one.
  const attempts = options.port === undefined ? 3 : 1;
  let lastError: unknown;
  for (let i = 0; i < attempts; i++) {
    const port = options.port ?? (await findFreePort());
    // anvil exits when its port is taken, but whoever holds the port may answer eth_chainId first.
    if (options.port !== undefined && !(await isPortFree(port))) {
      throw new NonRetryableError(`cannot start anvil: port ${port} is already in use`);
    }
    try {
      return await launch(port, options);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/** Ask the OS for a free TCP port on 127.0.0.1. */
export async function findFreePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no free port"))));
    });
  });
}

/** True when nothing listens on `port` of 127.0.0.1 right now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

function anvilArgs(port: number, options: StartAnvilOptions): string[] {
  const args = ["--silent", "--host", "127.0.0.1", "--port", String(port)];
  args.push("--chain-id", String(options.chainId ?? 31337));
  if (options.noMining) args.push("--no-mining");
  else if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime));
  args.push(...(options.extraArgs ?? []));
  return args;
}

/**
 * Runs `"$@"` (prlimit, which execs anvil) in the background, prints its pid, and waits for it. Meanwhile a
 * subshell reads the watchdog's stdin, a pipe whose only writer is this process: when that process ends, by
 * any means, the kernel closes the pipe, `read` sees end-of-file and anvil is killed. Background commands of a
 * non-interactive shell read /dev/null, hence the copy of stdin on fd 3. `read` is a builtin: no process is
 * left behind when the subshell is killed after anvil exited.
 */
const WATCHDOG = `exec 3<&0
"$@" 3<&- </dev/null >/dev/null &
node=$!
echo "$node"
( while read -r _ <&3; do :; done; kill -KILL "$node" 2>/dev/null ) &
watcher=$!
wait "$node"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"`;

async function launch(port: number, options: StartAnvilOptions): Promise<Anvil> {
  const memory = Math.floor(options.memoryLimitBytes ?? 4e9);
  const command = ["prlimit", `--as=${memory}`, "--", anvilBinaryPath(), ...anvilArgs(port, options)];
  const child = spawn("sh", ["-c", WATCHDOG, "anvil-watchdog", ...command], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  // The pipe stays open, unwritten, for the watchdog to wait on; a write error only means it is gone.
  child.stdin?.on("error", () => undefined);
  const anvilPid = new Promise<number>((resolve) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const line = /^(\d+)\n/.exec(out);
      if (line) resolve(Number(line[1]));
    });
    child.once("exit", () => resolve(-1));
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  const spawnFailed = new Promise<never>((_, reject) => {
    child.once("error", (error) => reject(new NonRetryableError("could not start anvil", { cause: error })));
  });
  if (child.pid === undefined) await spawnFailed;
  const pid = await Promise.race([anvilPid, spawnFailed]);

  let done = false;
  void exited.then(() => {
    done = true;
  });
  const killOnExit = () => {
    if (!done) killNow(pid, "SIGKILL");
  };
  process.once("exit", killOnExit);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      process.removeListener("exit", killOnExit);
      if (!done) killNow(pid, "SIGTERM");
      const timer = setTimeout(() => {
        if (!done) killNow(pid, "SIGKILL");
      }, 5000);
      await exited;
      clearTimeout(timer);
      child.stdin?.destroy();
    })();
    return stopping;
  };

  const url = `http://127.0.0.1:${port}`;
  try {
    await Promise.race([
      waitForRpc(url, options.startTimeoutMs ?? 15_000),
      spawnFailed,
      exited.then(() => {
        const details = stderr.trim();
        throw new NonRetryableError(
          `anvil exited before answering on port ${port}`,
          details ? { details } : {},
        );
      }),
    ]);
    if (done) throw new NonRetryableError(`anvil exited right after starting on port ${port}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, port, pid, stop };
}

/** Signal anvil by its pid (callers check first that the watchdog has not seen it exit: pids are reused). */
function killNow(pid: number, signal: NodeJS.Signals): void {
  if (pid <= 0) return;
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Poll `eth_chainId` (https://ethereum.org/developers/docs/apis/json-rpc/#eth_chainid) until it answers. */
async function waitForRpc(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
        signal: AbortSignal.timeout(1000),
      });
      const body: unknown = await response.json();
      if (typeof body === "object" && body !== null && "result" in body) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new NonRetryableError(`anvil did not answer eth_chainId within ${timeoutMs} ms`);
}
