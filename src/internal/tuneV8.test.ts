import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const MODULE = fileURLToPath(new URL("./tuneV8.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Run `script` in a child process, tuned by tuneV8() first or left at Node's defaults; its stdout as JSON. */
async function inChild<T>(script: string, mode: "tuned" | "default"): Promise<T> {
  const prelude = `if (process.argv[1] === "tuned") (await import(${JSON.stringify(MODULE)})).tuneV8();\n`;
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
 * Compiles and calls a WebAssembly function (an i32 add) and asks V8 which tier compiled it: `true` when its
 * baseline compiler (Liftoff) did.
 */
const WASM_TIER = `
const { setFlagsFromString } = await import("node:v8");
setFlagsFromString("--allow-natives-syntax");
// (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
const bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 127, 127, 1, 127, 3, 2, 1, 0, 7, 7, 1, 3,
  97, 100, 100, 0, 0, 10, 9, 1, 7, 0, 32, 0, 32, 1, 106, 11]);
const { instance } = await WebAssembly.instantiate(bytes);
const sum = instance.exports.add(2, 3);
console.log(JSON.stringify({ sum, liftoff: new Function("f", "return %IsLiftoffFunction(f)")(instance.exports.add) }));
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

  it("has WebAssembly compiled by the optimizing tier only, not by Liftoff first", async () => {
    const [tuned, untuned] = await Promise.all([
      inChild<{ sum: number; liftoff: boolean }>(WASM_TIER, "tuned"),
      inChild<{ sum: number; liftoff: boolean }>(WASM_TIER, "default"),
    ]);
    expect(untuned).toEqual({ sum: 5, liftoff: true });
    expect(tuned).toEqual({ sum: 5, liftoff: false });
  });
});
