import { readFileSync, rmSync } from "node:fs";
import { open, readFile, rm, stat, utimes } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { NonRetryableError } from "../internal/errors.ts";

/** The lock file protoscan keeps in a PGlite `DATA_DIR` while a process has the database open. */
export const DATA_DIR_LOCK_FILE = "protoscan.lock";
/** The holder touches the file this often, so that a lock from another host can be seen to be abandoned. */
const REFRESH_MS = 10_000;
/** A lock written on another host (a new container on the same volume) is abandoned after this long unrefreshed. */
const FOREIGN_STALE_MS = 60_000;
/** Attempts at taking a lock that keeps being released and re-taken by others meanwhile. */
const ATTEMPTS = 5;

type LockInfo = { pid: number; host: string; startedAt: string; procStart: string | null };

export type DataDirLock = {
  /** the lock file */
  path: string;
  /** Delete the lock file (only if it is still ours). Idempotent. */
  release(): Promise<void>;
};

/** Another live process holds the directory. */
export class DataDirLockedError extends NonRetryableError {
  override name = "DataDirLockedError";
}

/**
 * Take protoscan's lock on a PGlite data directory: `protoscan.lock`, created atomically (`O_EXCL`) with the
 * pid, host and start time of this process, refreshed every 10 s and deleted by `release()` (and when the
 * process exits). PGlite itself cannot tell (it writes pid -42 in `postmaster.pid`), and two processes on one
 * directory corrupt it.
 *
 * A lock left by a process that is gone (SIGKILL, OOM, power loss) is taken over: on this host when its pid
 * is no longer running (or now belongs to a process started later), from another host (a new container on
 * the same volume) once it has not been refreshed for 60 s.
 *
 * @throws {DataDirLockedError} naming the directory and the other process while that one is alive.
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const file = path.join(dir, DATA_DIR_LOCK_FILE);
  const mine: LockInfo = {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    procStart: processStart(process.pid),
  };
  const content = `${JSON.stringify(mine)}\n`;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    try {
      const handle = await open(file, "wx");
      try {
        await handle.writeFile(content);
      } finally {
        await handle.close();
      }
      return holdLock(file, content);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const held = await readLock(file);
    if (held === "gone") continue; // released meanwhile
    if (held !== "unreadable" && isLive(held)) {
      throw new DataDirLockedError(
        `DATA_DIR ${dir} is in use by another protoscan process (pid ${held.info.pid} on ${held.info.host}, ` +
          `since ${held.info.startedAt}): one PGlite directory serves one process. Stop it, use another ` +
          "DATA_DIR, or use PostgreSQL (DATABASE_URL) to run several processes",
      );
    }
    // Stale, or half written by a process killed while creating it: remove it, unless it changed meanwhile.
    const again = await readFile(file, "utf8").catch(() => null);
    if (again !== null && (held === "unreadable" || again === held.raw)) await rm(file, { force: true });
  }
  throw new DataDirLockedError(`could not take the lock on DATA_DIR ${dir}: ${file} keeps changing`);
}

function holdLock(file: string, content: string): DataDirLock {
  const refresh = setInterval(() => {
    const now = new Date();
    utimes(file, now, now).catch(() => undefined);
  }, REFRESH_MS);
  refresh.unref();
  // A process that exits without closing the database (process.exit, an uncaught error) leaves no lock.
  const onExit = () => removeIfMine(file, content);
  process.once("exit", onExit);
  let releasing: Promise<void> | undefined;
  return {
    path: file,
    release() {
      releasing ??= (async () => {
        clearInterval(refresh);
        process.removeListener("exit", onExit);
        const current = await readFile(file, "utf8").catch(() => null);
        if (current === content) await rm(file, { force: true });
      })();
      return releasing;
    },
  };
}

function removeIfMine(file: string, content: string): void {
  try {
    if (readFileSync(file, "utf8") === content) rmSync(file, { force: true });
  } catch {
    // already gone
  }
}

type HeldLock = { info: LockInfo; raw: string; mtimeMs: number };

async function readLock(file: string): Promise<HeldLock | "gone" | "unreadable"> {
  let raw: string;
  let mtimeMs: number;
  try {
    [raw, { mtimeMs }] = await Promise.all([readFile(file, "utf8"), stat(file)]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw error;
  }
  try {
    const value: unknown = JSON.parse(raw);
    if (
      typeof value === "object" &&
      value !== null &&
      typeof (value as LockInfo).pid === "number" &&
      typeof (value as LockInfo).host === "string" &&
      typeof (value as LockInfo).startedAt === "string"
    ) {
      const info = value as LockInfo;
      return { info: { ...info, procStart: info.procStart ?? null }, raw, mtimeMs };
    }
  } catch {
    // fall through
  }
  // Written by a process killed between creating the file and writing it: give a live writer a moment.
  return Date.now() - mtimeMs < 2_000 ? { info: unknownHolder(), raw, mtimeMs } : "unreadable";
}

function unknownHolder(): LockInfo {
  return { pid: 0, host: hostname(), startedAt: "just now", procStart: null };
}

/** Whether the process that wrote the lock may still be running. */
function isLive(held: HeldLock): boolean {
  const { info } = held;
  if (info.pid === 0) return true; // being written right now
  if (info.host !== hostname()) return Date.now() - held.mtimeMs < FOREIGN_STALE_MS;
  if (info.pid === process.pid) return true; // this very process opened the directory already
  try {
    process.kill(info.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // alive, owned by another user
  }
  // The pid runs, but it may have been reused by a process started after the lock holder died.
  const start = processStart(info.pid);
  return info.procStart === null || start === null || start === info.procStart;
}

/**
 * When a process started (field 22 of `/proc/<pid>/stat`, in clock ticks since boot), to tell a reused pid from
 * the original; null where `/proc` is not available. A zombie counts as gone.
 */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: split after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z") return "zombie";
    return fields[19] ?? null;
  } catch {
    return null;
  }
}
