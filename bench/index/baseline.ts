import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { NonRetryableError } from "../../src/internal/errors.ts";

const run = promisify(execFile);

/** Where a commit's build puts the benchmark phase: bench/index/ now, bench/ before the folder existed. */
const PHASE_SCRIPTS = ["bench/index/indexPhase.js", "bench/indexPhase.js"];

/** Another commit's compiled benchmark phase, ready to run against the same chain (`--baseline`). */
export type Baseline = {
  /** the ref as given */
  ref: string;
  /** the commit it names */
  commit: string;
  /** its compiled `bench/index/indexPhase.js` (`bench/indexPhase.js` in commits before bench/index/) */
  phaseScript: string;
  /** delete its files */
  remove(): Promise<void>;
};

/**
 * `npm run bench:index -- --baseline <git ref>`: the PGlite disk phase of another commit, compiled, to run
 * alternately with this tree's in the same rounds (docs/performance.md, "Indexer backfill"). On a shared
 * machine the floor moves by 25% between runs: a change is only measurable against its old code in the same
 * minutes, on the same chain.
 *
 * The commit's files are extracted into `dir` (`git archive`, so the repository's worktrees are left alone),
 * it uses this tree's `node_modules` (compare commits with the same dependencies), and is built with its own
 * `scripts/build.js`. Throws a NonRetryableError when `repo` is not a git checkout, the ref names no commit,
 * or the commit predates the compiled benchmark phase.
 */
export async function prepareBaseline(repo: string, ref: string, dir: string): Promise<Baseline> {
  const commit = await run("git", ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: repo })
    .then(({ stdout }) => stdout.trim())
    .catch(() => {
      throw new NonRetryableError(`--baseline: ${ref} names no commit of the git checkout at ${repo}`);
    });
  await mkdir(dir, { recursive: true });
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    const archive = join(dir, "..", `baseline-${commit.slice(0, 12)}.tar`);
    await run("git", ["archive", "--format=tar", "-o", archive, commit], { cwd: repo });
    await run("tar", ["-xf", archive, "-C", dir]);
    await rm(archive);
    await symlink(join(repo, "node_modules"), join(dir, "node_modules"), "dir");
    const build = join(dir, "scripts", "build.js");
    if (existsSync(build)) await run(process.execPath, [build], { cwd: dir });
    // Its build keeps its own PGlite template in the node_modules it shares with this tree and removes every
    // other one (a commit of other migrations, or before the template dropped template0/1): this tree's is
    // built again, so that its phases open new databases from it as `npm start` does. The baseline's then
    // open the slow way, outside what its phase measures. Built here, from this tree's sources (dist/ may be
    // stale while benchmarking): PGlite creates the cluster in worker threads that end with it.
    const { buildPgliteTemplate } = await import("../../src/store/buildPgliteTemplate.ts");
    const { PGLITE_TEMPLATE_CACHE } = await import("../../src/store/pgliteTemplate.ts");
    const { createSilentLogger } = await import("../../src/internal/logger.ts");
    await buildPgliteTemplate(PGLITE_TEMPLATE_CACHE, createSilentLogger());
    const phaseScript = PHASE_SCRIPTS.map((path) => join(dir, "dist", path)).find((path) => existsSync(path));
    if (!phaseScript) {
      throw new NonRetryableError(
        `--baseline: ${ref} (${commit.slice(0, 12)}) has no compiled benchmark phase (dist/bench/index/indexPhase.js after npm run build)`,
      );
    }
    return { ref, commit, phaseScript, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
