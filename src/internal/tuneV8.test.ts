import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const MODULE = fileURLToPath(new URL("./tuneV8.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Run `script` in a child process, tuned by tuneV8() first (then, for "serving", `setHeapWork("serving")`) or
 * left at Node's defaults; its stdout as JSON.
 */
async function inChild<T>(script: string, mode: "tuned" | "serving" | "default"): Promise<T> {
  const prelude = `const tune = await import(${JSON.stringify(MODULE)});
if (process.argv[1] !== "default") tune.tuneV8();
if (process.argv[1] === "serving") tune.setHeapWork("serving");\n`;
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "--eval", prelude + script, mode],
    { cwd: ROOT },
  );
  return JSON.parse(stdout) as T;
}

/**
 * A live set of some 20 MB that churns through objects which live long enough to reach the old generation
 * (a rolling window, as a backfill's groups do); prints the largest `heapUsed` it saw.
 */
const CHURN = `
const live = Array.from({ length: 300_000 }, (_, i) => ({ i, s: "x" + i }));
const window = [];
let peak = 0;
for (let i = 0; i < 3_000; i++) {
  window.push(Array.from({ length: 5_000 }, (_, j) => ({ i, j, s: "y" + j })));
  if (window.length > 60) window.shift();
  if (i % 20 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
}
console.log(JSON.stringify({ peakMb: peak / 1048576, live: live.length }));
`;

/**
 * Compiles a WebAssembly function (an i32 add), calls it until it is hot (a million calls per round, up to
 * `rounds` rounds, time for a background compilation in between) and asks V8 which tier compiled it: `true`
 * while its baseline compiler (Liftoff) did.
 */
const WASM_TIER = (rounds: number) => `
const { setFlagsFromString } = await import("node:v8");
setFlagsFromString("--allow-natives-syntax");
// (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
const bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 127, 127, 1, 127, 3, 2, 1, 0, 7, 7, 1, 3,
  97, 100, 100, 0, 0, 10, 9, 1, 7, 0, 32, 0, 32, 1, 106, 11]);
const { instance } = await WebAssembly.instantiate(bytes);
const add = instance.exports.add;
const isLiftoff = new Function("f", "return %IsLiftoffFunction(f)");
const sum = add(2, 3);
const first = isLiftoff(add);
let s = 0;
for (let round = 0; round < ${rounds} && isLiftoff(add); round++) {
  for (let i = 0; i < 1_000_000; i++) s = add(s, 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
}
console.log(JSON.stringify({ sum, first, hot: isLiftoff(add) }));
`;

/** PGlite's WebAssembly compiled whole, every function at once, with the flags `tuneV8` sets. */
const COMPILE_PGLITE = `
const { readFileSync } = await import("node:fs");
const { createRequire } = await import("node:module");
const path = await import("node:path");
const dist = path.dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
const { setFlagsFromString } = await import("node:v8");
setFlagsFromString("--no-wasm-lazy-compilation");
const compiled = [];
for (const file of ["pglite.wasm", "initdb.wasm"]) {
  await WebAssembly.compile(readFileSync(path.join(dist, file)));
  compiled.push(file);
}
console.log(JSON.stringify({ compiled }));
`;

describe("tuneV8", () => {
  it("keeps the old generation much closer to the live set than V8's default growth", async () => {
    const [tuned, untuned] = await Promise.all([
      inChild<{ peakMb: number }>(CHURN, "tuned"),
      inChild<{ peakMb: number }>(CHURN, "default"),
    ]);
    // Live: about 20 MB plus a 30 MB window. Bounded at +50% per full collection, unbounded up to 4x.
    expect(tuned.peakMb).toBeLessThan(untuned.peakMb * 0.75);
  });

  it("lets the old generation grow further once the process serves, from the next full collection on", async () => {
    const [tuned, serving] = await Promise.all([
      inChild<{ peakMb: number }>(CHURN, "tuned"),
      inChild<{ peakMb: number }>(CHURN, "serving"),
    ]);
    // 25% against 100% over the same live set: the switch made at run time takes effect.
    expect(serving.peakMb).toBeGreaterThan(tuned.peakMb * 1.2);
  });

  it("has WebAssembly compiled by Liftoff only, never tiered up to TurboFan however hot", async () => {
    const [tuned, untuned] = await Promise.all([
      inChild<{ sum: number; first: boolean; hot: boolean }>(WASM_TIER(10), "tuned"),
      inChild<{ sum: number; first: boolean; hot: boolean }>(WASM_TIER(100), "default"),
    ]);
    // By default the hot function is compiled again by TurboFan (within 100 million calls).
    expect(untuned).toEqual({ sum: 5, first: true, hot: false });
    expect(tuned).toEqual({ sum: 5, first: true, hot: true });
  });

  it("compiles all of PGlite's WebAssembly with Liftoff alone (no function needs TurboFan)", async () => {
    // With --liftoff-only, a function Liftoff cannot compile is a compile error instead of a TurboFan fallback.
    expect(await inChild<{ compiled: string[] }>(COMPILE_PGLITE, "tuned")).toEqual({
      compiled: ["pglite.wasm", "initdb.wasm"],
    });
  });
});
