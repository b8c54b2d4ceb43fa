import { type CliProcess, spawnProtoscan } from "../helpers/processes.ts";

const STARTUP_MS = 90_000;

/**
 * The protoscan writer (`start`, role all) as a supervisor such as systemd runs it: `kill()` plays a crash
 * (SIGKILL) and starts it again at once; an exit nobody asked for is counted and restarted too.
 */
export type Writer = {
  /** The API URL of the running process, once it listens (waits through a restart). */
  url(): Promise<string>;
  /** SIGKILL the process and start a new one (`delayMs` later). */
  kill(delayMs: number): Promise<void>;
  /** SIGTERM and wait for a clean exit (code 0); afterwards `start()` runs it again. */
  stop(): Promise<void>;
  start(): void;
  /** exits the writer chose itself (crash or fatal error), each followed by a restart */
  readonly unexpectedExits: number;
  /** why each of those exits happened: exit code or signal, and the process' last error or warning */
  readonly exitReasons: readonly string[];
  readonly pid: number | undefined;
  /** Output tail of every process started, newest last (for failure messages). */
  outputs(): string;
  /** Every JSON log line of every process started, oldest first, one per line with its pid. */
  logText(): string;
  /** The requests some process answered 500 (its `unhandled error` lines), oldest first, one per line. */
  internalErrors(): string[];
  /** Close everything (SIGKILL). Idempotent. */
  close(): Promise<void>;
};

export function createWriter(env: Record<string, string>): Writer {
  let child: CliProcess | undefined;
  let listening: Promise<string> | undefined;
  let unexpectedExits = 0;
  const exitReasons: string[] = [];
  let closed = false;
  const history: CliProcess[] = [];
  const intended = new WeakSet<CliProcess>();

  const start = () => {
    const spawned = spawnProtoscan(["start"], { PORT: "0", LOG_LEVEL: "info", ...env });
    history.push(spawned);
    child = spawned;
    listening = spawned.listening(STARTUP_MS);
    listening.catch(() => undefined);
    void spawned.exited.then((exit) => {
      if (closed || intended.has(spawned) || child !== spawned) return;
      unexpectedExits++;
      const last = [...spawned.lines].reverse().find((line) => (line.level ?? 0) >= 40);
      // An uncaught error ends in stderr, not in a log line: keep its text too.
      const tail = spawned.output().trim().split("\n").slice(-12).join(" | ");
      exitReasons.push(
        `code ${exit.code} signal ${exit.signal}: ${last ? `last warning: ${last.msg} ${JSON.stringify(last.err ?? "")}; ` : ""}output: ${tail}`.slice(
          0,
          2000,
        ),
      );

      setTimeout(() => {
        if (!closed && child === spawned) start();
      }, 200);
    });
  };

  return {
    async url() {
      for (let attempt = 0; ; attempt++) {
        try {
          if (!listening) throw new Error("the writer is not running");
          return await listening;
        } catch (error) {
          // It died while starting: the supervisor starts another one; wait for that one.
          if (attempt >= 5 || closed) throw error;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    },
    async kill(delayMs) {
      const current = child;
      if (current) {
        intended.add(current);
        await current.stop();
      }
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      start();
    },
    async stop() {
      const current = child;
      if (!current) return;
      intended.add(current);
      current.signal("SIGTERM");
      const exit = await current.waitForExit(20_000);
      if (exit.code !== 0) throw new Error(`the writer exited with ${JSON.stringify(exit)} on SIGTERM`);
      child = undefined;
      listening = undefined;
    },
    start,
    get exitReasons() {
      return exitReasons;
    },
    get unexpectedExits() {
      return unexpectedExits;
    },
    get pid() {
      return child?.pid;
    },
    outputs() {
      return history
        .slice(-3)
        .map((c) => `--- pid ${c.pid} ---\n${c.output().slice(-2500)}`)
        .join("\n");
    },
    logText() {
      return history
        .flatMap((c) => c.lines.map((line) => JSON.stringify({ pid: c.pid, ...line })))
        .join("\n");
    },
    internalErrors() {
      return history.flatMap((c) =>
        c.lines
          .filter((line) => line.msg === "unhandled error")
          .map((line) => `pid ${c.pid}: ${JSON.stringify(line).slice(0, 1500)}`),
      );
    },
    async close() {
      closed = true;
      for (const c of history) await c.stop();
    },
  };
}
