import { NonRetryableError } from "../src/internal/errors.ts";

export type BenchArgs = {
  /** protocol transactions to generate (`--count`, default 10,000) */
  count: number;
  /** transactions mined per block (`--per-block`, default 10) */
  perBlock: number;
  /** hashes fetched at once by the viem floor (`--floor-concurrency`, default 200) */
  floorConcurrency: number;
  /** phases to run (`--phases floor,pglite-disk,…`, default all that apply) */
  phases: PhaseName[] | null;
  /** write the results as JSON here too (`--json <path>`) */
  jsonPath: string | null;
  /** run every phase this many times, interleaved, and report each phase's median run (`--rounds`, 1) */
  rounds: number;
};

export const PHASE_NAMES = ["floor", "pglite-disk", "pglite-memory", "postgres"] as const;
export type PhaseName = (typeof PHASE_NAMES)[number];

const USAGE = `usage: npm run bench:index -- [--count N] [--per-block N] [--floor-concurrency N] [--rounds N]
       [--phases floor,pglite-disk,pglite-memory,postgres] [--json results.json]
PostgreSQL is measured when DATABASE_URL is set (a fresh database is created on that server and dropped).`;

/** Parse the command line of `npm run bench:index`; `--help` throws the usage text. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = {
    count: 10_000,
    perBlock: 10,
    floorConcurrency: 200,
    phases: null,
    jsonPath: null,
    rounds: 1,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new NonRetryableError(`${flag} needs a value\n${USAGE}`);
      return v;
    };
    switch (flag) {
      case "--count":
        args.count = positiveInteger(flag, value());
        break;
      case "--per-block":
        args.perBlock = positiveInteger(flag, value());
        break;
      case "--floor-concurrency":
        args.floorConcurrency = positiveInteger(flag, value());
        break;
      case "--phases":
        args.phases = value()
          .split(",")
          .map((p) => {
            if (!(PHASE_NAMES as readonly string[]).includes(p)) {
              throw new NonRetryableError(`--phases: unknown phase ${p} (${PHASE_NAMES.join(", ")})`);
            }
            return p as PhaseName;
          });
        break;
      case "--rounds":
        args.rounds = positiveInteger(flag, value());
        break;
      case "--json":
        args.jsonPath = value();
        break;
      case "--help":
      case "-h":
        throw new NonRetryableError(USAGE);
      default:
        throw new NonRetryableError(`unknown argument ${flag}\n${USAGE}`);
    }
  }
  return args;
}

function positiveInteger(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new NonRetryableError(`${flag}: not a positive integer: ${text}`);
  return n;
}
