import { execFile } from "node:child_process";
import { appendFile, cp, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);
/** What `npm run build` and the CLI read; the copy keeps this checkout's dist/ out of the test. */
const COPIED = [
  "src",
  "bench",
  "scripts",
  "web",
  "bin",
  "package.json",
  "tsconfig.json",
  "tsconfig.build.json",
];

describe("npm run build", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "protoscan-build-"));
    for (const entry of COPIED) await cp(join(REPO, entry), join(dir, entry), { recursive: true });
    await symlink(join(REPO, "node_modules"), join(dir, "node_modules"), "dir");
    // migrate reads the config for its database settings only: no node is asked.
    await writeFile(
      join(dir, "protoscan.config.yaml"),
      "chain: { id: 31337 }\nrpc: { urls: [http://127.0.0.1:1] }\n",
    );
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** `protoscan migrate` into a PGlite directory of the copy: its "migrations up to date" log line. */
  async function migrate(): Promise<{ applied: number; code: string }> {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: join(dir, "data"), LOG_LEVEL: "info" };
    delete env.DATABASE_URL;
    delete env.NODE_OPTIONS;
    const { stdout } = await run(process.execPath, ["bin/protoscan.js", "migrate"], { cwd: dir, env });
    const line = stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { msg: string; applied: number; code: string })
      .find((l) => l.msg === "migrations up to date");
    if (!line) throw new Error(`no "migrations up to date" line in:\n${stdout}`);
    return { applied: line.applied, code: line.code };
  }

  test("default: the CLI runs the compiled code, with its migrations and PGlite worker, until a source changes", async () => {
    const built = await run(process.execPath, ["scripts/build.js"], { cwd: dir });
    expect(built.stdout).toMatch(/build: dist\/ is current \([0-9a-f]{12}\)/);
    const migrations = (await readdir(join(dir, "src", "store", "migrations"))).filter((f) =>
      f.endsWith(".sql"),
    );
    expect(migrations.length).toBeGreaterThan(10);
    expect(await migrate()).toEqual({ applied: migrations.length, code: "dist" });

    // An edit without a build: the sources run (through tsx), never the stale dist/.
    await appendFile(join(dir, "src", "cli", "main.ts"), "\n// edited after the build\n");
    expect(await migrate()).toEqual({ applied: 0, code: "src" });

    // Built again, the compiled code runs again.
    await run(process.execPath, ["scripts/build.js"], { cwd: dir });
    expect(await migrate()).toEqual({ applied: 0, code: "dist" });
  }, 120_000);
});
