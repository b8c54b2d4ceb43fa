// @ts-check
/**
 * The CLI as one bundle (`dist/bundle/`, by `npm run build`), which `bin/protoscan.js` runs when it is current.
 *
 * Why: unbundled, `protoscan start` loads about 2,000 modules (typebox alone 680, viem 340), and Node resolves,
 * reads and links each: 1.6-1.8 CPU-s and about 100 MB of RSS before anything runs, against 0.5-0.7 CPU-s and
 * about 80 MB bundled (docs/performance.md, "First start"). esbuild splits the bundle at the CLI's dynamic
 * imports, so `--help`, `migrate` and `demo` still load only what they use.
 *
 * What stays outside (loaded from node_modules as before): packages that find files of their own next to
 * their modules (`@fastify/swagger` and `@fastify/swagger-ui` read their package.json and static files from
 * `__dirname`, pino runs transports from files), PGlite (its WebAssembly and data files; it runs in the worker,
 * `src/store/pgliteWorker.js`), and the demo's compilers and anvil binary. The files protoscan finds beside its
 * own modules are copied beside the bundle: the PGlite worker (with `pgliteMissingFiles.js`, which it imports)
 * and the migrations.
 */
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

/** Packages loaded from node_modules at run time, not bundled (see above). */
export const EXTERNAL = [
  "@electric-sql/pglite",
  "@fastify/swagger",
  "@fastify/swagger-ui",
  "@foundry-rs/*",
  "esbuild",
  "pg-native",
  "pino",
  "pino-pretty",
  "solc",
  "thread-stream",
  "tsx",
];

/**
 * Bundle `src/cli/main.ts` into `<dist>/bundle/main.js` (and its chunks), with the files read beside it.
 * @param {string} root the repository
 * @param {string} dist its dist/
 */
export async function bundleCli(root, dist) {
  const out = join(dist, "bundle");
  await build({
    entryPoints: { main: join(root, "src", "cli", "main.ts") },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    outdir: out,
    external: EXTERNAL,
    logLevel: "warning",
    // The CommonJS packages in the bundle call `require` for Node's built-in modules; an ES module has none.
    banner: {
      js: "import { createRequire as __protoscanRequire } from 'node:module'; const require = __protoscanRequire(import.meta.url);",
    },
  });
  for (const file of ["pgliteWorker.js", "pgliteMissingFiles.js"]) {
    cpSync(join(root, "src", "store", file), join(out, file));
  }
  cpSync(join(root, "src", "store", "migrations"), join(out, "migrations"), { recursive: true });
  for (const file of readdirSync(out)) {
    if (file.endsWith(".js")) asciiOnly(join(out, file));
  }
}

/**
 * Escape the non-ASCII characters left in a JavaScript file (`\uXXXX`, the same character wherever it is).
 *
 * Why: V8 keeps every loaded script's source text for the life of the process (functions compile lazily, from
 * it), as a one-byte string only when every character is Latin-1. esbuild escapes non-ASCII characters in code
 * but keeps comments as written, and one em dash in a comment of the 2.6 MB chunk made V8 keep it as 5.2 MB of
 * UTF-16. Escaped, the bundle's sources take 2.9 MB less of the heap (docs/performance.md, "First start").
 * @param {string} file
 */
function asciiOnly(file) {
  const text = readFileSync(file, "utf8");
  const escaped = text.replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  if (escaped !== text) writeFileSync(file, escaped);
}
