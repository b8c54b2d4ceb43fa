// @ts-check
/**
 * `npm run build` (also run by `npm install`, as `prepare`): build the web explorer into dist/web/
 * (scripts/buildWeb.js), compile src/ and bench/index/indexPhase.ts into dist/
 * with `tsconfig.build.json`, copy the other files the compiled code reads (migrations, the PGlite worker),
 * bundle the CLI into dist/bundle/ (scripts/bundleCli.js: what `bin/protoscan.js` runs), and record the
 * sources' fingerprint (scripts/compiled.js). Without type checks: `npm run typecheck` does
 * those, and a type error must not stop a start. Then build the migrated PGlite template new databases start
 * from (src/store/buildPgliteTemplate.ts), unless the one of the current migrations is there; a template that
 * cannot be built is reported and skipped: new databases are then created the slow way.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { buildWeb } from "./buildWeb.js";
import { bundleCli } from "./bundleCli.js";
import { DIST, ROOT, SOURCE_DIRS, STAMP, sourceFiles, sourceFingerprint } from "./compiled.js";

// Taken before compiling: a file edited during the build leaves a stamp that no longer matches.
const fingerprint = sourceFingerprint();
rmSync(DIST, { recursive: true, force: true });
// The web explorer (dist/web/) is served by the same process: built first, with or without a compiler.
await buildWeb();
const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
if (!existsSync(tsc)) {
  // `npm install --omit=dev` has no compiler: protoscan runs its sources through tsx, as before a build.
  process.stdout.write(
    "build: skipped, TypeScript is not installed; protoscan runs its sources through tsx\n",
  );
  process.exit(0);
}
const compiled = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
  cwd: ROOT,
  stdio: "inherit",
});
if (compiled.status !== 0) {
  process.stderr.write(`build: tsc exited with ${compiled.status ?? compiled.signal}\n`);
  process.exit(1);
}
for (const path of sourceFiles()) {
  if (!SOURCE_DIRS.some((dir) => path.startsWith(`${dir}/`)) || path.endsWith(".ts")) continue;
  mkdirSync(dirname(join(DIST, path)), { recursive: true });
  cpSync(join(ROOT, path), join(DIST, path));
}
try {
  await bundleCli(ROOT, DIST);
} catch (error) {
  process.stderr.write(`build: bundling the CLI failed: ${error instanceof Error ? error.message : error}\n`);
  process.exit(1);
}
writeFileSync(STAMP, `${fingerprint}\n`);
process.stdout.write(`build: dist/ is current (${fingerprint.slice(0, 12)})\n`);

// In a process of its own: creating a cluster takes PGlite's WebAssembly memory to 800 MB, for a few seconds.
const started = performance.now();
const template = spawnSync(process.execPath, [join(ROOT, "scripts", "buildPgliteTemplate.js")], {
  cwd: ROOT,
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
});
if (template.status === 0) {
  const { dir, built } = JSON.parse(template.stdout);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(`build: PGlite template ${built ? `built in ${seconds} s` : "is current"}: ${dir}\n`);
} else {
  process.stderr.write(
    `build: the PGlite template could not be built (exit ${template.status ?? template.signal}): new databases will be created with initdb and migrations, which takes several seconds\n`,
  );
}
