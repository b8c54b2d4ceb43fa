// @ts-check
import { lstatSync } from "node:fs";
import { join } from "node:path";

/** PGlite's (emscripten's) errno for "no such file or directory". */
const ENOENT = 44;

/**
 * Answer PostgreSQL's lookups of files that do not exist without a Node.js exception: patches the NODEFS
 * file system of a PGlite instance (`pg.Module`) in place. Returns false, patching nothing, when that file
 * system is not shaped as expected (a PGlite release changed its internals): lookups then work as before.
 *
 * Why: a backfill makes PostgreSQL open files that do not exist thousands of times. Each new btree page looks
 * for a reusable page in its index's free space map (`GetFreeIndexPage`), a fork that only VACUUM creates, so
 * the open fails: 3,112 times through 20,000 transactions. emscripten's NODEFS resolves each name with
 * `fs.lstatSync`, which throws a Node.js error with a stack trace for a missing file; those opens took 0.55 s
 * of the database thread, and 0.25 s with this (docs/performance.md, "First start").
 *
 * A missing name is answered with `lstatSync(…, { throwIfNoEntry: false })` and PGlite's own ENOENT error
 * (no stack). A name that exists goes to NODEFS's own lookup, which caches its node. Nothing missing is
 * cached: a file created afterwards, by PostgreSQL or anyone, is found by the next lookup.
 * @param {any} module PGlite's emscripten module (`pg.Module`)
 * @returns {boolean} whether the file system was patched
 */
export function answerMissingFilesCheaply(module) {
  const FS = module?.FS;
  const NODEFS = module?.NODEFS;
  const ops = NODEFS?.node_ops;
  if (
    typeof FS?.ErrnoError !== "function" ||
    typeof NODEFS?.realPath !== "function" ||
    typeof ops?.lookup !== "function"
  ) {
    return false;
  }
  const lookup = ops.lookup;
  /** @param {any} parent @param {string} name */
  ops.lookup = (parent, name) => {
    if (lstatSync(join(NODEFS.realPath(parent), name), { throwIfNoEntry: false }) === undefined) {
      throw new FS.ErrnoError(ENOENT);
    }
    return lookup(parent, name);
  };
  return true;
}
