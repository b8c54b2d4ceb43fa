// @ts-check
/**
 * Where protoscan's compiled JavaScript lives and whether it is current (docs/development.md, "Build").
 * Plain JavaScript: `bin/protoscan.js` reads it before any TypeScript loader is registered.
 *
 * `npm run build` (also run by `npm install`) compiles src/ and bench/ into dist/ and records a fingerprint
 * of the sources it compiled. A process runs dist/ only while the sources still have that fingerprint, so
 * an edit, a checkout or a pull without a build never runs stale code: it runs the sources through tsx.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const DIST = join(ROOT, "dist");
/** The fingerprint of the sources dist/ was built from. */
export const STAMP = join(DIST, ".sources");
/** What the build compiles (and copies the other files of): tests excluded. */
export const SOURCE_DIRS = ["src", "bench"];
/** Files outside those the compiled code depends on. */
const SOURCE_FILES = ["package.json", "tsconfig.json", "tsconfig.build.json"];

/**
 * Whether `path` (relative to the root) is a test or test-only module, which the build leaves out.
 * @param {string} path
 */
export function isTestFile(path) {
  return /\.test\.ts$/.test(path) || /(^|\/)_test\//.test(path);
}

/** Every file the build reads, relative to the root, sorted. */
export function sourceFiles() {
  const files = [...SOURCE_FILES];
  for (const dir of SOURCE_DIRS) {
    for (const entry of readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = relative(ROOT, join(entry.parentPath, entry.name)).split("\\").join("/");
      if (!isTestFile(path)) files.push(path);
    }
  }
  return files.sort();
}

/** A hash of the sources' paths, sizes and modification times (a few milliseconds for ~300 files). */
export function sourceFingerprint() {
  const hash = createHash("sha256");
  for (const path of sourceFiles()) {
    const stat = statSync(join(ROOT, path));
    hash.update(`${path}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest("hex");
}

/**
 * The `file:` URL of `path` (relative to the root, `.js`) in dist/ when dist/ was built from the sources as
 * they are now; otherwise undefined (never built, or a source changed since).
 * @param {string} path
 * @returns {string | undefined}
 */
export function compiledModule(path) {
  let stamp;
  try {
    stamp = readFileSync(STAMP, "utf8").trim();
  } catch {
    return undefined;
  }
  return stamp === sourceFingerprint() ? pathToFileURL(join(DIST, path)).href : undefined;
}
