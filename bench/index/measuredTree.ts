import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { NonRetryableError } from "../../src/internal/errors.ts";
import { processTreeRssMb } from "../_shared/processTreeRss.ts";

const SAMPLE_MS = 50;
const POLL_MS = 20;
const TIMEOUT_MS = 300_000;

/** A command started in a process group of its own, timed from its spawn, its tree's RSS sampled. */
export type MeasuredTree = {
  /** seconds since the spawn */
  elapsed(): number;
  /** the highest RSS of the whole tree seen so far, in MiB (sampled every 50 ms and on `sample()`) */
  peakMb(): number;
  sample(): void;
  /**
   * Poll `check` every 20 ms until it returns a value; throws (naming the command by `what`) when the command
   * exits first, or after 300 s.
   */
  until<T>(check: () => Promise<T | undefined>): Promise<T>;
  /** SIGTERM the whole group, then wait (up to 15 s) until none of it runs, so its files may be removed. */
  stop(): Promise<void>;
};

/**
 * Spawn `command args` in a new process group (detached), as a user's terminal would run it: wrappers such as
 * npm and its shell count in the tree's RSS, and `stop` reaches the program they started, which npm alone
 * would leave running. Its output (stdout and stderr) goes to the file `options.log`, whose last lines the
 * error of `until` quotes when the command exits early.
 */
export function spawnMeasured(
  what: string,
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; log: string },
): MeasuredTree {
  const started = performance.now();
  const out = openSync(options.log, "w");
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", out, out],
    detached: true,
  });
  closeSync(out);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      resolve();
    }),
  );
  let peak = 0;
  const sample = () => {
    if (child.pid !== undefined && !exited) peak = Math.max(peak, processTreeRssMb(child.pid));
  };
  sample();
  const sampler = setInterval(sample, SAMPLE_MS);
  return {
    elapsed: () => (performance.now() - started) / 1000,
    peakMb: () => peak,
    sample,
    async until(check) {
      const deadline = Date.now() + TIMEOUT_MS;
      while (Date.now() < deadline) {
        if (exited) {
          const tail = readFileSync(options.log, "utf8").trimEnd().split("\n").slice(-20).join("\n");
          throw new NonRetryableError(
            `${what} exited before the measurement ended; its last output:\n${tail}`,
          );
        }
        const value = await check();
        if (value !== undefined) return value;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      throw new NonRetryableError(`${what} did not get there within ${TIMEOUT_MS / 1000} s`);
    },
    async stop() {
      clearInterval(sampler);
      if (!exited && child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
      await exit;
      const deadline = Date.now() + 15_000;
      while (child.pid !== undefined && groupAlive(child.pid) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

/** Whether any process of the process group `pgid` is still running. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The HTTP status `url` answers with (its body drained), or undefined while nothing listens there. */
export async function statusOf(url: string): Promise<number | undefined> {
  const response = await fetch(url).catch(() => null);
  await response?.arrayBuffer();
  return response?.status;
}
