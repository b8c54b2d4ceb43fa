import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on the Linux kernels this runs on). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time of this process's main thread (its event loop), in µs, from /proc (Linux); null where there is no
 * /proc. `process.cpuUsage()` counts every thread: with PGlite's worker and V8's collector threads beside it,
 * it cannot tell which of them a change made cheaper. The resolution is a clock tick (10 ms): read it around
 * seconds of load, not around one request.
 */
export function eventLoopCpuMicros(): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // pid (comm) state … utime stime: comm may hold spaces and parentheses, so count fields after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1_000_000) / TICKS_PER_SECOND;
}
