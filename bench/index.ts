/**
 * `npm run bench:index` — how fast protoscan backfills, against the floor any indexer pays.
 *
 * Builds one anvil chain with N mixed protocol transactions, then runs each phase against it in its own
 * process (so peak RSS is per phase): (a) a bare viem fetch of the same logs, transactions and receipts;
 * (b) protoscan's backfill into PGlite on disk and in memory://; (c) into a fresh PostgreSQL database when
 * DATABASE_URL is set; with `--baseline <git ref>`, that commit's (b) on disk too, alternately. Prints
 * transactions/s, the ratio b/a, JSON-RPC requests and Alchemy compute units per transaction, peak RSS, and
 * PASS/MISS per target. Then (s) what a user meets: `npm start` on an empty PGlite DATA_DIR (and a fresh
 * PostgreSQL database), timed to /healthz and to fully indexed, with the peak RSS of the whole process tree
 * (bench/index/cliStart.ts); with `--phases …,start-ponder`, Ponder's own `npm start` on the same chain beside it
 * (bench/index/ponderStart.ts). See docs/performance.md.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compiledModule } from "../scripts/compiled.js";
import { NODE_FLAGS } from "../scripts/nodeFlags.js";
import type { Anvil } from "../src/demo/anvil.ts";
import { freshPostgresDatabase } from "./_shared/freshPostgresDatabase.ts";
import { runBench } from "./_shared/runBench.ts";
import { type Baseline, prepareBaseline } from "./index/baseline.ts";
import { type PhaseName, parseBenchArgs, type RunName } from "./index/benchArgs.ts";
import { buildChain, writeBenchChain } from "./index/buildChain.ts";
import { measureCliStart, type StartResult } from "./index/cliStart.ts";
import {
  type CreateResult,
  medianRun,
  type PhaseResult,
  readCreateResult,
  readPhaseResult,
} from "./index/phaseResult.ts";
import { measurePonderStart } from "./index/ponderStart.ts";
import { formatReport } from "./index/report.ts";
import { formatStartReport, medianStart } from "./index/startReport.ts";

const PHASE_SCRIPT = fileURLToPath(new URL("./index/indexPhase.ts", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

const children = new Set<ChildProcess>();
let anvil: Anvil | undefined;
let baseline: Baseline | undefined;
let work: string | undefined;
const cleanups: (() => Promise<void>)[] = [];

async function cleanup(): Promise<void> {
  for (const child of children) child.kill("SIGTERM");
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined);
  await anvil?.stop();
  await baseline?.remove();
  if (work) await rm(work, { recursive: true, force: true });
}

/**
 * The phase script as protoscan runs: compiled from dist/ when it is current (`npm install` builds it), else
 * the TypeScript source through tsx, which costs the process about 80 MB more (docs/development.md, "Build").
 */
const COMPILED_PHASE = compiledModule("bench/index/indexPhase.js");

/**
 * Run `node [NODE_FLAGS] dist/bench/index/indexPhase.js <args>` (or the source through tsx) and wait for it to exit
 * successfully. protoscan's phases get the Node options protoscan is started with; the floor Node's defaults.
 */
async function runChild(
  label: string,
  phase: RunName,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const script =
    phase === "baseline" && baseline
      ? [baseline.phaseScript]
      : COMPILED_PHASE
        ? [fileURLToPath(COMPILED_PHASE)]
        : ["--import", "tsx", PHASE_SCRIPT];
  const options = phase === "floor" ? [] : NODE_FLAGS;
  const child = spawn(process.execPath, [...options, ...script, ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "inherit", "inherit"],
  });
  children.add(child);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (c) => resolve(c));
  });
  children.delete(child);
  if (code !== 0) throw new Error(`${label} failed (exit code ${code})`);
}

/**
 * Run one phase in child processes of its own and read its result. pglite-disk (and no-store) takes two: one
 * creates and migrates the data directory, the next backfills into it (the peak RSS of each is reported).
 * `baseline` is the baseline commit's pglite-disk phase.
 */
async function runPhase(
  run: RunName,
  args: { chainFile: string; dir: string; floorConcurrency: number; databaseUrl?: string },
): Promise<PhaseResult> {
  const phase: PhaseName = run === "baseline" ? "pglite-disk" : run;
  const out = join(args.dir, `${run}.json`);
  const argv = ["--phase", phase, "--chain", args.chainFile, "--out", out];
  argv.push("--floor-concurrency", String(args.floorConcurrency));
  const env = { ...process.env };
  delete env.DATABASE_URL;
  if (args.databaseUrl) env.DATABASE_URL = args.databaseUrl;
  let create: CreateResult | undefined;
  if (phase === "pglite-disk" || phase === "no-store") {
    const dataDir = join(args.dir, `${run}-pglite`);
    argv.push("--data-dir", dataDir);
    const createOut = join(args.dir, `${run}-create.json`);
    await runChild(
      `creating ${dataDir}`,
      run,
      ["--phase", phase, "--data-dir", dataDir, "--out", createOut, "--create-only"],
      env,
    );
    create = await readCreateResult(createOut);
  }
  await runChild(`phase ${run}`, run, argv, env);
  const result = { ...(await readPhaseResult(out)), phase: run };
  return create ? { ...result, create } : result;
}

/** A fresh database on the DATABASE_URL server, dropped at cleanup. */
async function freshDatabase(serverUrl: string): Promise<string> {
  const database = await freshPostgresDatabase(serverUrl, "index");
  cleanups.push(database.drop);
  return database.url;
}

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  // Said first and last: a stale dist/ (any edit under src/ or bench/ since the last build) runs everything
  // through tsx, `npm start` included, about 2 s slower to /healthz and 50-60 MiB heavier than a user's start.
  const staleWarning =
    "WARNING: dist/ is missing or stale, so protoscan and its phases run through tsx: these are not the figures a user meets after `npm install`. Run `npm run build` first.\n";
  if (!COMPILED_PHASE) process.stdout.write(staleWarning);
  const serverUrl = process.env.DATABASE_URL || undefined;
  const selected = args.phases ?? [
    "floor",
    "pglite-disk",
    "pglite-memory",
    ...(serverUrl ? (["postgres"] as const) : []),
  ];
  const startPhases = args.startPhases ?? [
    "start-pglite",
    ...(serverUrl ? (["start-postgres"] as const) : []),
  ];
  work = await mkdtemp(join(tmpdir(), "protoscan-bench-"));
  if (args.baseline) {
    process.stdout.write(`building the baseline ${args.baseline}…\n`);
    baseline = await prepareBaseline(REPO_ROOT, args.baseline, join(work, "baseline"));
  }
  // The baseline's run is next to this tree's PGlite disk run in every round, on the same chain: after it in
  // odd rounds, before it in even ones, so that neither always runs on the other's warm page cache.
  const phases: RunName[] = selected.flatMap((p) =>
    p === "pglite-disk" && baseline ? (["pglite-disk", "baseline"] as const) : [p],
  );
  if (baseline && !phases.includes("baseline")) phases.push("baseline");
  const swap: Partial<Record<RunName, RunName>> = { "pglite-disk": "baseline", baseline: "pglite-disk" };
  const inRound = (round: number): RunName[] =>
    round % 2 === 1 || !phases.includes("pglite-disk") || !phases.includes("baseline")
      ? phases
      : phases.map((p) => swap[p] ?? p);
  process.stdout.write(`building the chain: ${args.count} transactions, ${args.perBlock} per block…\n`);
  const built = await buildChain({ count: args.count, perBlock: args.perBlock });
  anvil = built.anvil;
  const chainFile = join(work, "chain.json");
  await writeBenchChain(chainFile, built.chain);

  // Rounds interleave the phases, so that a burst of load on a shared machine hits all of them alike.
  const runs = new Map<RunName, PhaseResult[]>(phases.map((p) => [p, []]));
  const starts = new Map<StartResult["phase"], StartResult[]>(startPhases.map((p) => [p, []]));
  const load = [loadavg()[0] ?? 0];
  for (let round = 1; round <= args.rounds; round++) {
    const dir = join(work, `round-${round}`);
    await mkdir(dir);
    for (const phase of inRound(round)) {
      process.stdout.write(`round ${round}/${args.rounds}: phase ${phase}…\n`);
      let databaseUrl: string | undefined;
      if (phase === "postgres") {
        if (!serverUrl) throw new Error("the postgres phase needs DATABASE_URL");
        databaseUrl = await freshDatabase(serverUrl);
      }
      const result = await runPhase(phase, {
        chainFile,
        dir,
        floorConcurrency: args.floorConcurrency,
        ...(databaseUrl ? { databaseUrl } : {}),
      });
      runs.get(phase)?.push(result);
    }
    // The start phases take turns at going first (protoscan's and Ponder's, PGlite's and PostgreSQL's), so that
    // neither always runs on the other's warm page cache or in the same minute of a load burst.
    for (const phase of round % 2 === 1 ? startPhases : [...startPhases].reverse()) {
      process.stdout.write(`round ${round}/${args.rounds}: phase ${phase}…\n`);
      if (phase === "start-ponder") {
        const result = await measurePonderStart({
          chain: built.chain,
          repoRoot: REPO_ROOT,
          dir: join(dir, phase),
        });
        starts.get(phase)?.push(result);
        continue;
      }
      let databaseUrl: string | undefined;
      if (phase === "start-postgres") {
        if (!serverUrl) throw new Error("the start-postgres phase needs DATABASE_URL");
        databaseUrl = await freshDatabase(serverUrl);
      }
      const result = await measureCliStart({
        chain: built.chain,
        repoRoot: REPO_ROOT,
        dir: join(dir, phase),
        ...(databaseUrl ? { databaseUrl } : {}),
      });
      starts.get(phase)?.push(result);
    }
    await rm(dir, { recursive: true, force: true });
    load.push(loadavg()[0] ?? 0);
  }
  const results = phases.map((phase) => medianRun(runs.get(phase) ?? []));
  const startResults = startPhases.map((phase) => medianStart(starts.get(phase) ?? []));

  if (results.length > 0) process.stdout.write(`\n${formatReport(built.chain, results, baseline)}\n`);
  if (startResults.length > 0) process.stdout.write(`\n${formatStartReport(startResults)}\n`);
  process.stdout.write(
    `\nphases ran ${COMPILED_PHASE ? "compiled JavaScript from dist/" : "TypeScript through tsx (dist/ is missing or stale: npm run build)"}`,
  );
  if (!COMPILED_PHASE) process.stdout.write(`\n${staleWarning}`);
  process.stdout.write(
    `\nmachine: ${cpus().length} CPUs, node ${process.version}; 1-minute load average ${load.map((l) => l.toFixed(1)).join(" -> ")}\n`,
  );
  const floor = results.find((r) => r.phase === "floor");
  const mismatched = results.filter((r) => floor && r.transactions !== floor.transactions);
  for (const r of mismatched) {
    process.stdout.write(
      `WARNING ${r.phase} stored ${r.transactions} transactions, the floor fetched ${floor?.transactions}\n`,
    );
  }
  if (args.jsonPath) {
    const machine = { cpus: cpus().length, node: process.version, loadAverage: load };
    await writeFile(
      args.jsonPath,
      JSON.stringify(
        { date: new Date().toISOString(), machine, chain: built.chain, results, starts: startResults },
        null,
        2,
      ),
    );
  }
  if (mismatched.length > 0) process.exitCode = 1;
}

await runBench("index", main, { cleanup });
