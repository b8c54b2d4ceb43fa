import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const MODULE = fileURLToPath(new URL("./boundHeap.ts", import.meta.url));

/**
 * A child process with a live set of some 20 MB that churns through objects which live long enough to reach the old
 * generation (a rolling window, as a backfill's groups do), and prints the largest `heapUsed` it saw.
 */
const CHURN = `
const bound = process.argv[1] === "bound";
if (bound) (await import(${JSON.stringify(MODULE)})).boundHeapGrowth();
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

async function peakHeapMb(mode: "bound" | "default"): Promise<number> {
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "--eval", CHURN, mode],
    { cwd: fileURLToPath(new URL("../..", import.meta.url)) },
  );
  return (JSON.parse(stdout) as { peakMb: number }).peakMb;
}

describe("boundHeapGrowth", () => {
  it("keeps the old generation much closer to the live set than V8's default growth", async () => {
    const [bounded, unbounded] = await Promise.all([peakHeapMb("bound"), peakHeapMb("default")]);
    // Live: about 20 MB plus a 30 MB window. Bounded at +50% per full collection, unbounded up to 4x.
    expect(bounded).toBeLessThan(unbounded * 0.75);
  });
});
