import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { DATA_DIR_LOCK_FILE, DataDirLockedError, lockDataDir } from "./dataDirLock.ts";

const MODULE = fileURLToPath(new URL("./dataDirLock.ts", import.meta.url));

let dirs: string[] = [];
let children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  dirs = [];
  children = [];
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "protoscan-lock-"));
  dirs.push(dir);
  return dir;
}

/** A node process that takes the lock on `dir`, says so, and waits to be killed (or exits at once). */
async function holdInChild(
  dir: string,
  then: "wait" | "exit" = "wait",
): Promise<{ child: ChildProcess; exited: Promise<unknown> }> {
  const script = `
    const { lockDataDir } = await import(${JSON.stringify(MODULE)});
    await lockDataDir(${JSON.stringify(dir)});
    console.log("locked");
    ${then === "exit" ? "process.exit(0);" : "setInterval(() => {}, 1000);"}
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("locked")) resolve();
    });
    child.once("exit", () => (then === "exit" ? resolve() : reject(new Error("the child exited early"))));
  });
  return { child, exited };
}

const lockPath = (dir: string) => path.join(dir, DATA_DIR_LOCK_FILE);

describe("lockDataDir", () => {
  test("default: writes pid, host and start time; release removes the file", async () => {
    const dir = await tempDir();
    const lock = await lockDataDir(dir);
    expect(lock.path).toBe(lockPath(dir));
    const info = JSON.parse(await readFile(lock.path, "utf8"));
    expect(info).toMatchObject({ pid: process.pid, host: hostname() });
    expect(Number.isNaN(Date.parse(info.startedAt))).toBe(false);
    await lock.release();
    expect(existsSync(lock.path)).toBe(false);
    await lock.release(); // idempotent
    // and it can be taken again
    await (await lockDataDir(dir)).release();
  });

  test("error: a second lock in the same process", async () => {
    const dir = await tempDir();
    const lock = await lockDataDir(dir);
    try {
      await expect(lockDataDir(dir)).rejects.toBeInstanceOf(DataDirLockedError);
    } finally {
      await lock.release();
    }
  });

  test("error: another live process holds it; taken over once that process is SIGKILLed", async () => {
    const dir = await tempDir();
    const { child, exited } = await holdInChild(dir);
    await expect(lockDataDir(dir)).rejects.toThrow(
      `DATA_DIR ${dir} is in use by another protoscan process (pid ${child.pid} on ${hostname()}, since `,
    );
    child.kill("SIGKILL");
    await exited;
    // The killed process could not remove its file: it is stale now.
    expect(existsSync(lockPath(dir))).toBe(true);
    const lock = await lockDataDir(dir);
    expect(JSON.parse(await readFile(lock.path, "utf8")).pid).toBe(process.pid);
    await lock.release();
  });

  test("behavior: a process that exits without releasing leaves no lock file", async () => {
    const dir = await tempDir();
    const { child, exited } = await holdInChild(dir, "exit");
    await exited;
    expect(child.exitCode).toBe(0);
    expect(existsSync(lockPath(dir))).toBe(false);
  });

  test("behavior: a reused pid is not mistaken for the holder", async () => {
    const dir = await tempDir();
    // pid 1 runs, but it started before this lock's holder did: not the same process.
    await writeFile(
      lockPath(dir),
      JSON.stringify({
        pid: 1,
        host: hostname(),
        startedAt: "2026-01-01T00:00:00.000Z",
        procStart: "999999999",
      }),
    );
    await (await lockDataDir(dir)).release();
  });

  test("behavior: a lock from another host is held while refreshed, stale after 60 s", async () => {
    const dir = await tempDir();
    const file = lockPath(dir);
    const foreign = JSON.stringify({ pid: 4242, host: "other-host", startedAt: "2026-01-01T00:00:00.000Z" });
    await writeFile(file, foreign);
    await expect(lockDataDir(dir)).rejects.toThrow(
      "(pid 4242 on other-host, since 2026-01-01T00:00:00.000Z)",
    );
    const old = new Date(Date.now() - 61_000);
    await utimes(file, old, old);
    await (await lockDataDir(dir)).release();
  });

  test("behavior: an empty lock file left by a crash while creating it is taken over", async () => {
    const dir = await tempDir();
    const file = lockPath(dir);
    await writeFile(file, "");
    const old = new Date(Date.now() - 10_000);
    await utimes(file, old, old);
    await (await lockDataDir(dir)).release();
  });
});
