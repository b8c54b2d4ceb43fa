#!/usr/bin/env node
// protoscan runs its compiled JavaScript, bundled in dist/bundle/, when `npm run build` (run by `npm install`)
// built it from the sources as they are now, and otherwise its TypeScript sources through tsx: an edit without
// a build never runs stale code. Compiled, the process has no loader thread and no transformed copies of every
// module (about 80 MB less memory), and bundled it loads a few dozen files instead of about 2,000 (about 1 CPU-s
// and 20 MB less at start; docs/development.md, "Build").
import { compiledModule } from "../scripts/compiled.js";

const compiled = compiledModule("bundle/main.js");
if (compiled) {
  await import(compiled);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
