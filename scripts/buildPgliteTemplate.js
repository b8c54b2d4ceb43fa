// @ts-check
/**
 * Run by scripts/build.js once dist/ is built, in a process of its own (creating a cluster takes PGlite's
 * WebAssembly memory to 800 MB for a few seconds): build the migrated PGlite template new databases start
 * from (src/store/buildPgliteTemplate.ts) and print `{ dir, built }` as JSON.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DIST } from "./compiled.js";

const compiled = (/** @type {string} */ path) => pathToFileURL(join(DIST, path)).href;
const { buildPgliteTemplate } = await import(compiled("src/store/buildPgliteTemplate.js"));
const { PGLITE_TEMPLATE_CACHE } = await import(compiled("src/store/pgliteTemplate.js"));
const { createSilentLogger } = await import(compiled("src/internal/logger.js"));
const { dir, built } = await buildPgliteTemplate(PGLITE_TEMPLATE_CACHE, createSilentLogger());
process.stdout.write(JSON.stringify({ dir, built }));
