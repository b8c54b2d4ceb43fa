import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ROOT } from "../../scripts/compiled.js";
import { NonRetryableError } from "../../src/internal/errors.ts";
import { prepareBaseline } from "./baseline.ts";
import type { PhaseResult } from "./phaseResult.ts";
import { checkTargets, compareToBaseline } from "./report.ts";

const result = (phase: PhaseResult["phase"], seconds: number, peakRssMb: number): PhaseResult => ({
  phase,
  transactions: 1000,
  seconds,
  cpuSeconds: seconds * 1.2,
  requests: { eth_getLogs: 1 },
  computeUnits: 60,
  setupSeconds: 0,
  notes: "",
  peakRssMb,
});

describe("--baseline report", () => {
  const results = [result("floor", 1, 250), result("pglite-disk", 2, 290), result("baseline", 2.5, 310)];

  test("default: this tree's PGlite disk run against the baseline's, from their median runs", () => {
    expect(compareToBaseline(results, { ref: "main~1", commit: "0123456789abcdef" })).toBe(
      "against the baseline main~1 (0123456789ab), PGlite on disk, median runs: seconds 2.00 vs 2.50 (-20.0%), CPU s 2.40 vs 3.00 (-20.0%), peak RSS MB 290 vs 310",
    );
    expect(compareToBaseline(results.slice(0, 2), { ref: "x", commit: "y" })).toBeNull();
  });

  test("behavior: the targets are checked for this tree only", () => {
    expect(new Set(checkTargets(results).map((c) => c.phase))).toEqual(new Set(["pglite-disk"]));
  });

  test("behavior: the no-store diagnostic is reported but held to no target", () => {
    const withDiagnostic = [...results, result("no-store", 1.2, 200)];
    expect(checkTargets(withDiagnostic)).toEqual(checkTargets(results));
  });
});

describe.skipIf(!existsSync(join(ROOT, ".git")))("prepareBaseline", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "protoscan-baseline-test-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("default: the commit's files, built, with its compiled phase; remove() deletes them", async () => {
    const into = join(dir, "head");
    const baseline = await prepareBaseline(ROOT, "HEAD", into);
    expect(baseline.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(baseline.phaseScript).toBe(join(into, "dist", "bench", "index", "indexPhase.js"));
    expect(existsSync(baseline.phaseScript)).toBe(true);
    // the committed source, not this checkout's working tree
    expect(await readFile(join(into, "package.json"), "utf8")).toContain('"name": "protoscan"');
    await baseline.remove();
    expect(existsSync(into)).toBe(false);
  }, 120_000);

  test("errors: a ref that names no commit, with nothing left behind", async () => {
    const into = join(dir, "unknown");
    const error = await prepareBaseline(ROOT, "no-such-ref-anywhere", into).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonRetryableError);
    expect((error as Error).message).toContain("no-such-ref-anywhere names no commit");
    expect(existsSync(into)).toBe(false);
  });
});
