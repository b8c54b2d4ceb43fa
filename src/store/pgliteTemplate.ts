import { createHash } from "node:crypto";
import { constants, readdirSync, readFileSync } from "node:fs";
import { copyFile, mkdir, readdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { Logger } from "../internal/logger.ts";
import { REPO_ROOT } from "../internal/repoRoot.ts";
import { DATA_DIR_LOCK_FILE } from "./dataDirLock.ts";
import { MIGRATIONS_FOLDER } from "./migrate.ts";

/**
 * Where `npm install` (scripts/build.js, `buildPgliteTemplate`) keeps the migrated PGlite templates a new
 * database starts from (docs/operations.md, "A new database"): one folder per fingerprint.
 */
export const PGLITE_TEMPLATE_CACHE = path.join(REPO_ROOT, "node_modules", ".cache", "protoscan");

/**
 * The databases initdb makes beside `postgres` (the one PGlite opens): what `CREATE DATABASE` copies, which
 * protoscan never runs. The template leaves them out: they were 600 of its 1,100 files (15 of 44 MB), and
 * every new `DATA_DIR` copies the template's files, each copy mostly the system calls of creating a file
 * (0.5-1 s for all of them on this project's test machine, on the way to `/healthz`).
 */
export const TEMPLATE_DATABASES = ["template1", "template0"] as const;

/** One built template: a migrated data directory and the same cluster as a gzipped `dumpDataDir` tarball. */
export type PgliteTemplate = {
  /** the folder holding both */
  dir: string;
  /** a data directory to copy (a new `DATA_DIR`) */
  dataDir: string;
  /** a gzipped tarball for PGlite's `loadDataDir` (`memory://`) */
  tarball: string;
};

const PREFIX = "pglite-";

/**
 * What a template depends on: the migrations (their file names and bytes, the journal included) and the
 * PGlite version that made the cluster. Another migration or another PGlite gives another fingerprint, so a
 * template can never be stale: it is found or not.
 */
export function pgliteTemplateFingerprint(): string {
  const hash = createHash("sha256");
  // Its package.json is not among its exports: found beside dist/, where its entry point is.
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const manifest = path.join(path.dirname(path.dirname(entry)), "package.json");
  const pglite = JSON.parse(readFileSync(manifest, "utf8")) as { version?: unknown };
  hash.update(`pglite ${String(pglite.version)}\n`);
  // What the build leaves out of the migrated cluster: a template built with other databases is rebuilt.
  hash.update(`dropped: ${TEMPLATE_DATABASES.join(" ")}\n`);
  const files = readdirSync(MIGRATIONS_FOLDER, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(MIGRATIONS_FOLDER, path.join(entry.parentPath, entry.name)))
    .map((file) => file.split(path.sep).join("/"))
    .sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(path.join(MIGRATIONS_FOLDER, file)));
    hash.update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/** The paths of the template with `fingerprint` in `cache` (which may not exist). */
export function pgliteTemplatePaths(cache: string, fingerprint: string): PgliteTemplate {
  const dir = path.join(cache, `${PREFIX}${fingerprint}`);
  return { dir, dataDir: path.join(dir, "data"), tarball: path.join(dir, "data.tar.gz") };
}

/**
 * The template for the current migrations in `cache`, or undefined with a log line saying why the new
 * database is created the slow way (initdb and every migration: several seconds and 700-800 MB).
 */
export async function findPgliteTemplate(cache: string, logger: Logger): Promise<PgliteTemplate | undefined> {
  const fingerprint = pgliteTemplateFingerprint();
  const built = await readdir(cache).catch(() => [] as string[]);
  const template = pgliteTemplatePaths(cache, fingerprint);
  if (built.includes(path.basename(template.dir))) return template;
  const others = built.filter((entry) => entry.startsWith(PREFIX));
  logger.info(
    { templates: cache, fingerprint },
    others.length > 0
      ? "the PGlite template was built for other migrations or another PGlite version (npm run build makes a current one): creating the database with initdb and migrations, which takes several seconds"
      : "no PGlite template (npm run build makes one): creating the database with initdb and migrations, which takes several seconds",
  );
  return undefined;
}

/** Files copied at once by `copyPgliteTemplate` (libuv's thread pool runs four of them at a time). */
const COPY_CONCURRENCY = 16;

/**
 * Copy the template's data directory into `dir` (empty but for protoscan's lock and creation marker): plain
 * file copies, no PostgreSQL and no WebAssembly. The directories first, then the files (about 500, most of
 * them small: each copy is mostly the system calls of creating a file) COPY_CONCURRENCY at a time on the
 * thread pool, while the event loop goes on: the CLI loads the rest of protoscan meanwhile (src/cli/main.ts).
 */
export async function copyPgliteTemplate(template: PgliteTemplate, dir: string): Promise<void> {
  const files: [from: string, to: string][] = [];
  const walk = async (from: string, to: string) => {
    for (const entry of await readdir(from, { withFileTypes: true })) {
      if (entry.name === DATA_DIR_LOCK_FILE) continue;
      const source = path.join(from, entry.name);
      const target = path.join(to, entry.name);
      if (entry.isDirectory()) {
        await mkdir(target, { mode: 0o700 });
        await walk(source, target);
      } else if (entry.isFile()) files.push([source, target]);
    }
  };
  await walk(template.dataDir, dir);
  let next = 0;
  const copier = async () => {
    for (let file = files[next++]; file !== undefined; file = files[next++]) {
      // A copy-on-write clone where the file system has them (btrfs, XFS, APFS), else a copy.
      await copyFile(file[0], file[1], constants.COPYFILE_FICLONE);
    }
  };
  await Promise.all(Array.from({ length: COPY_CONCURRENCY }, copier));
}
