import { readFileSync } from "node:fs";

/**
 * CPU seconds the main thread (the event loop) has run so far, from Linux's `/proc/self/task/<pid>/schedstat`
 * (nanoseconds on CPU, first field), or null where that file does not exist. `process.cpuUsage()` counts every
 * thread of the process; this tells how much of it the event loop itself did, which is what decides whether
 * storing can overlap fetching. Unlike wall time, it barely depends on the machine's load.
 */
export function mainThreadCpuSeconds(): number | null {
  try {
    const [onCpu] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ");
    const ns = Number(onCpu);
    return Number.isFinite(ns) ? ns / 1e9 : null;
  } catch {
    return null;
  }
}
