import { readFile } from "node:fs/promises";
import { NonRetryableError } from "../../src/internal/errors.ts";

/** Resident set size of process `pid` in bytes (`VmRSS` of /proc/<pid>/status, given in kB). */
export async function sampleRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new NonRetryableError(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}
