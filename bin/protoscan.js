#!/usr/bin/env node
// protoscan runs its compiled JavaScript from dist/ when `npm run build` (run by `npm install`) built it from
// the sources as they are now, and otherwise its TypeScript sources through tsx: an edit without a build never
// runs stale code. Compiled, the process has no loader thread and no transformed copies of every module:
// about 80 MB less memory (docs/development.md, "Build").
import { compiledModule } from "../scripts/compiled.js";

const compiled = compiledModule("src/cli/main.js");
if (compiled) {
  await import(compiled);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
