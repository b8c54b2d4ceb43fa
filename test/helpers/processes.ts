import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { NODE_FLAGS } from "../../scripts/nodeFlags.js";

/** One JSON line pino wrote (`msg`, `level`, and whatever fields the call site logged). */
export type LogLine = Record<string, unknown> & { level?: number; msg?: string };

export type ProcessExit = { code: number | null; signal: NodeJS.Signals | null };

/** A `protoscan` CLI running as a child process, its stdout parsed line by line. */
export type CliProcess = {
  pid: number;
  /** JSON log lines written so far, in order. */
  readonly lines: readonly LogLine[];
  /** The last 8 KiB of stdout + stderr, for failure messages. */
  output(): string;
  /** Resolves with the first line (already written or to come) matching `predicate`; rejects on exit or timeout. */
  waitForLine(predicate: (line: LogLine) => boolean, timeoutMs: number): Promise<LogLine>;
  /** Resolves with the API URL once "protoscan is listening" was logged (`start` only). */
  listening(timeoutMs: number): Promise<string>;
  /** Send a signal (no-op once the process has exited). */
  signal(signal: NodeJS.Signals): void;
  /** Resolves when the process has exited. */
  readonly exited: Promise<ProcessExit>;
  /** Resolves with the exit, or rejects (after a SIGKILL) when it takes longer than `timeoutMs`. */
  waitForExit(timeoutMs: number): Promise<ProcessExit>;
  /** SIGKILL unless already exited, and wait. Idempotent: call it in `afterAll`. */
  stop(): Promise<void>;
};

const BIN = fileURLToPath(new URL("../../bin/protoscan.js", import.meta.url));
const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** Variables protoscan reads: the child gets only the ones the test passes, never the test runner's own. */
const PROTOSCAN_ENV = [
  "PROTOSCAN_CONFIG",
  "RPC_URL",
  "DATABASE_URL",
  "DATA_DIR",
  "HOST",
  "PORT",
  "LOG_LEVEL",
];

/**
 * Run `node <NODE_FLAGS> bin/protoscan.js <args>` from the repository root, as `npm start` does (compiled from
 * dist/ when it matches the sources, else the sources through tsx: docs/development.md, "Build"), with `env` on
 * top of this process' environment minus protoscan's own variables. The child is killed when the test process
 * exits, even if `stop()` is forgotten.
 */
export function spawnProtoscan(args: readonly string[], env: Record<string, string>): CliProcess {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [...PROTOSCAN_ENV, "NODE_OPTIONS"]) delete base[name];
  const child = spawn(process.execPath, [...NODE_FLAGS, BIN, ...args], {
    cwd: REPO,
    env: { ...base, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error("could not spawn protoscan");
  const pid = child.pid;

  const lines: LogLine[] = [];
  const waiters = new Set<() => void>();
  let tail = "";
  let partial = "";
  const keep = (text: string) => {
    tail = (tail + text).slice(-8192);
  };
  child.stdout?.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    keep(text);
    partial += text;
    const parts = partial.split("\n");
    partial = parts.pop() ?? "";
    for (const part of parts) {
      const line = parseLine(part);
      if (line) lines.push(line);
    }
    for (const wake of waiters) wake();
  });
  child.stderr?.on("data", (chunk: Buffer) => keep(chunk.toString("utf8")));

  let done = false;
  const exited = new Promise<ProcessExit>((resolve) => {
    // "close", not "exit": every line the process wrote has been read by then.
    child.once("close", (code, signal) => {
      done = true;
      process.removeListener("exit", killOnExit);
      resolve({ code, signal });
      for (const wake of waiters) wake();
    });
  });
  const killOnExit = () => send(child, "SIGKILL");
  process.once("exit", killOnExit);

  const waitForLine: CliProcess["waitForLine"] = (predicate, timeoutMs) =>
    new Promise((resolve, reject) => {
      let seen = 0;
      const check = () => {
        for (; seen < lines.length; seen++) {
          const line = lines[seen]!;
          if (predicate(line)) return finish(() => resolve(line));
        }
        if (done) finish(() => reject(new Error(`protoscan exited first; output:\n${tail}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no matching log line in ${timeoutMs} ms; output:\n${tail}`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      waiters.add(check);
      check();
    });

  const waitForExit: CliProcess["waitForExit"] = async (timeoutMs) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const outcome = await Promise.race([exited, timeout]);
    clearTimeout(timer);
    if (outcome !== "timeout") return outcome;
    send(child, "SIGKILL");
    await exited;
    throw new Error(`protoscan did not exit within ${timeoutMs} ms; output:\n${tail}`);
  };

  return {
    pid,
    lines,
    output: () => tail,
    waitForLine,
    async listening(timeoutMs) {
      const line = await waitForLine((l) => l.msg === "protoscan is listening", timeoutMs);
      if (typeof line.url !== "string") throw new Error("'protoscan is listening' without a url");
      return line.url;
    },
    signal: (signal) => send(child, signal),
    exited,
    waitForExit,
    async stop() {
      send(child, "SIGKILL");
      await exited;
    },
  };
}

function send(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    child.kill(signal);
  } catch {
    // already gone
  }
}

function parseLine(text: string): LogLine | null {
  if (!text.startsWith("{")) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as LogLine) : null;
  } catch {
    return null;
  }
}
