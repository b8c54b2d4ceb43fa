import { readFile } from "node:fs/promises";

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every Linux build that matters). */
const USER_HZ = 100;

/**
 * CPU time (user + system, seconds) a process has used so far, from `/proc/<pid>/stat` (proc(5): fields 14
 * and 15, counted after the parenthesized command name, which may itself hold spaces). 0 when the process
 * is gone or /proc is unavailable: the figure is informative, never a reason to fail a run.
 */
export async function cpuSeconds(pid: number): Promise<number> {
  try {
    return parseProcStatCpu(await readFile(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return 0;
  }
}

/** utime + stime of a `/proc/<pid>/stat` line, in seconds. */
export function parseProcStatCpu(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state): utime (14) and stime (15) are fields[11] and fields[12].
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error("unreadable /proc stat line");
  return (utime + stime) / USER_HZ;
}
