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

  /**
   * `protoscan migrate` into a PGlite directory of the copy: its "migrations up to date" log line, and whether
   * the database was created from the template the build made.
   */
  async function migrate(): Promise<{ applied: number; code: string; fromTemplate: boolean }> {
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
    const fromTemplate = stdout.includes('"msg":"database created from the template"');
    return { applied: line.applied, code: line.code, fromTemplate };
  }

  test("default: the CLI runs the compiled code, with its migrations and PGlite worker, until a source changes", async () => {
    const built = await run(process.execPath, ["scripts/build.js"], { cwd: dir });
    expect(built.stdout).toMatch(/build: dist\/ is current \([0-9a-f]{12}\)/);
    // The migrated template new databases start from (node_modules/.cache/protoscan; this copy shares the
    // checkout's node_modules, so it may have been built already for these migrations).
    expect(built.stdout).toMatch(
      /build: PGlite template (built in [0-9.]+ s|is current): \S+pglite-[0-9a-f]{16}\n/,
    );
    const migrations = (await readdir(join(dir, "src", "store", "migrations"))).filter((f) =>
      f.endsWith(".sql"),
    );
    expect(migrations.length).toBeGreaterThan(10);
    // A new data directory: copied from the template, already migrated.
    expect(await migrate()).toEqual({ applied: 0, code: "dist", fromTemplate: true });

    // An edit without a build: the sources run (through tsx), never the stale dist/.
    await appendFile(join(dir, "src", "cli", "main.ts"), "\n// edited after the build\n");
    expect(await migrate()).toEqual({ applied: 0, code: "src", fromTemplate: false });

    // Built again, the compiled code runs again.
    await run(process.execPath, ["scripts/build.js"], { cwd: dir });
    expect(await migrate()).toEqual({ applied: 0, code: "dist", fromTemplate: false });
  }, 120_000);
});
