import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

/** A helper process of the benchmark (TypeScript, run through tsx), talked to over IPC. */
export type Child = {
  pid: number | undefined;
  /** the next message the child sends (e.g. its announcement that it is ready) */
  next<T>(): Promise<T>;
  /** send a message and resolve with the next message the child sends back */
  ask<T>(message: object): Promise<T>;
  /** SIGTERM, then wait for the exit (idempotent) */
  stop(): Promise<void>;
};

const children = new Set<Child>();

/** Every child still running (to stop them on Ctrl-C or a failure). */
export function runningChildren(): Child[] {
  return [...children];
}

/** Fork `bench/api/<script>` with tsx's loader and IPC; stdout/stderr are the benchmark's own. */
export function startChild(script: string): Child {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const proc: ChildProcess = fork(path, [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const inbox: unknown[] = [];
  const waiting: { resolve: (m: unknown) => void; reject: (e: Error) => void }[] = [];
  proc.on("message", (message) => {
    const waiter = waiting.shift();
    if (waiter) waiter.resolve(message);
    else inbox.push(message);
  });
  proc.once("exit", (code, signal) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`${script} exited (${code ?? signal})`));
  });
  const next = () =>
    inbox.length > 0
      ? Promise.resolve(inbox.shift())
      : new Promise<unknown>((resolve, reject) => waiting.push({ resolve, reject }));
  const child: Child = {
    pid: proc.pid,
    next: <T>() => next() as Promise<T>,
    async ask<T>(message: object) {
      const reply = next();
      proc.send(message);
      return (await reply) as T;
    },
    async stop() {
      children.delete(child);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      await exited;
    },
  };
  children.add(child);
  return child;
}
