import { parseFlags } from "../_shared/cliFlags.ts";
import { PONDER_VERSION } from "./ponderStart.ts";

export type BenchArgs = {
  /** protocol transactions to generate (`--count`, default 10,000) */
  count: number;
  /** transactions mined per block (`--per-block`, default 10) */
  perBlock: number;
  /** hashes fetched at once by the viem floor (`--floor-concurrency`, default 200) */
  floorConcurrency: number;
  /** phases to run (`--phases floor,pglite-disk,…`, default all that apply) */
  phases: PhaseName[] | null;
  /** first-start phases to run (named in `--phases` too: `start-pglite,start-postgres`; default all that apply) */
  startPhases: StartPhaseName[] | null;
  /** write the results as JSON here too (`--json <path>`) */
  jsonPath: string | null;
  /** run every phase this many times, interleaved, and report each phase's median run (`--rounds`, 1) */
  rounds: number;
  /** a git ref whose PGlite disk phase runs too, alternately with this tree's (`--baseline`) */
  baseline: string | null;
};

/**
 * `no-store` is a diagnostic, run only when named: protoscan's backfill into PGlite on disk with every commit
 * skipped (fetch, decode and encode only), to tell the pipeline's cost from the database's.
 */
export const PHASE_NAMES = ["floor", "pglite-disk", "pglite-memory", "postgres", "no-store"] as const;
export type PhaseName = (typeof PHASE_NAMES)[number];
/**
 * The first-start phases (bench/index/cliStart.ts): `npm start` on an empty database, as a user runs it, timed to
 * `/healthz` and to fully indexed, with the peak RSS of its whole process tree. `start-ponder` (only when named)
 * does the same with Ponder on the same chain (bench/index/ponderStart.ts), for the same-run ratios.
 */
export const START_PHASE_NAMES = ["start-pglite", "start-postgres", "start-ponder"] as const;
export type StartPhaseName = (typeof START_PHASE_NAMES)[number];
/** What a report row measured: a phase of this tree, or `baseline`, another commit's PGlite disk phase. */
export type RunName = PhaseName | "baseline";

const USAGE = `usage: npm run bench:index -- [--count N] [--per-block N] [--floor-concurrency N] [--rounds N]
       [--phases floor,pglite-disk,pglite-memory,postgres,no-store,start-pglite,start-postgres,start-ponder]
       [--baseline <git ref>] [--json results.json]
PostgreSQL is measured when DATABASE_URL is set (a fresh database is created on that server and dropped).
start-pglite and start-postgres run \`npm start\` on an empty database as a user does: time to /healthz, time
to fully indexed, peak RSS of the whole process tree (npm included). start-ponder (only when named) does the
same with Ponder ${PONDER_VERSION} on the same chain, installed once under node_modules/.cache, and judges
protoscan's first start against it: at most 0.4x its time to indexed and 1/3 of its peak memory.
no-store (only when named) runs the PGlite disk backfill with its commits skipped: the pipeline without storing.
--baseline also runs that commit's PGlite disk phase, compiled, next to this tree's in every round.`;

/** Parse the command line of `npm run bench:index`; `--help` throws the usage text. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = {
    count: 10_000,
    perBlock: 10,
    floorConcurrency: 200,
    phases: null,
    startPhases: null,
    jsonPath: null,
    rounds: 1,
    baseline: null,
  };
  parseFlags(argv, USAGE, (flag, read) => {
    if (flag === "--count") args.count = read.integer();
    else if (flag === "--per-block") args.perBlock = read.integer();
    else if (flag === "--floor-concurrency") args.floorConcurrency = read.integer();
    else if (flag === "--phases") {
      const named: string[] = read.oneOf([...PHASE_NAMES, ...START_PHASE_NAMES], "phase");
      args.phases = PHASE_NAMES.filter((phase) => named.includes(phase));
      args.startPhases = START_PHASE_NAMES.filter((phase) => named.includes(phase));
    } else if (flag === "--rounds") args.rounds = read.integer();
    else if (flag === "--json") args.jsonPath = read.text();
    else if (flag === "--baseline") args.baseline = read.text();
    else return false;
    return true;
  });
  return args;
}
