import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Whether this process runs protoscan's compiled JavaScript from dist/ (`npm run build`, docs/development.md,
 * "Build"), not its TypeScript sources through tsx. Logged at start-up as `code: "dist"` or `"src"`.
 */
const COMPILED = import.meta.url.endsWith("/dist/src/internal/repoRoot.js");
/** Whether this module is part of the CLI's bundle, `dist/bundle/<chunk>.js` (scripts/bundleCli.js). */
const BUNDLED = /\/dist\/bundle\/[^/]+\.js$/.test(import.meta.url);

/** Where protoscan's code runs from, for logs: "dist" (compiled) or "src" (the sources, through tsx). */
export const CODE = COMPILED || BUNDLED ? "dist" : "src";

/**
 * The repository's root directory, for files outside src/ that protoscan reads (docs/errors.md, contracts/):
 * two levels above this module in src/internal/ (and in dist/bundle/), three when it runs compiled from
 * dist/src/internal/. Files inside src/ are found relative to their module: the build copies them into dist/
 * beside the compiled code (and the bundle).
 */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), COMPILED ? "../../.." : "../..");
