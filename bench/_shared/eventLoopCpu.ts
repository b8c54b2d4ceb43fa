import { readFileSync } from "node:fs";
import { parseProcStatCpu } from "./processCpu.ts";

/**
 * CPU time of this process's main thread (its event loop), in µs, from /proc (Linux); null where there is no
 * /proc. `process.cpuUsage()` counts every thread: with PGlite's worker and V8's collector threads beside it,
 * it cannot tell which of them a change made cheaper. The resolution is a clock tick (10 ms): read it around
 * seconds of load, not around one request.
 */
export function eventLoopCpuMicros(): number | null {
  try {
    return parseProcStatCpu(readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8")) * 1_000_000;
  } catch {
    return null;
  }
}
