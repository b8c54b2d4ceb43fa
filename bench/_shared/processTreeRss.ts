import { readdirSync, readFileSync } from "node:fs";

/** Bytes per page of /proc/<pid>/statm (4 KiB on the x86-64 and arm64 Linux this runs on). */
const PAGE_BYTES = 4096;

/**
 * The resident set size of the process `root` and all its descendants, in MiB, from /proc (Linux): what a
 * user sees a command take, wrapper processes (npm, sh) included. Shared pages count in each process, as
 * `ps` and `top` count them. 0 when `root` is gone; throws where there is no /proc.
 */
export function processTreeRssMb(root: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProc(`/proc/${entry}/stat`);
    if (stat === undefined) continue;
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after its last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const siblings = children.get(ppid) ?? [];
    siblings.push(Number(entry));
    children.set(ppid, siblings);
  }
  let pages = 0;
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    const statm = readProc(`/proc/${pid}/statm`);
    if (statm !== undefined) pages += Number(statm.split(" ")[1]);
    pending.push(...(children.get(pid) ?? []));
  }
  return (pages * PAGE_BYTES) / 1024 / 1024;
}

/** A /proc file's text, or undefined when its process has exited meanwhile. */
function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
