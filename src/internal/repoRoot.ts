import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Whether this process runs protoscan's compiled JavaScript from dist/ (`npm run build`, docs/development.md,
 * "Build"), not its TypeScript sources through tsx. Logged at start-up as `code: "dist"` or `"src"`.
 */
const COMPILED = import.meta.url.endsWith("/dist/src/internal/repoRoot.js");

/** Where protoscan's code runs from, for logs: "dist" (compiled) or "src" (the sources, through tsx). */
export const CODE = COMPILED ? "dist" : "src";

/**
 * The repository's root directory, for files outside src/ that protoscan reads (docs/errors.md, contracts/):
 * two levels above this module in src/internal/, three when it runs compiled from dist/src/internal/. Files
 * inside src/ are found relative to their module: the build copies them into dist/ beside the compiled code.
 */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), COMPILED ? "../../.." : "../..");
