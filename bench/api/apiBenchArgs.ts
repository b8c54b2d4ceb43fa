import { NonRetryableError } from "../../src/internal/errors.ts";

export type ApiBenchArgs = {
  /** measured seconds per endpoint (`--seconds`, default 10) */
  seconds: number;
  /** dropped seconds before each measurement (`--warmup`, default 2) */
  warmupSeconds: number;
  /** concurrent connections (`--connections`, default 50) */
  connections: number;
  /** transactions seeded (`--transactions`, default 100,000; two transfers each) */
  transactions: number;
  /** DEMO holders seeded (`--holders`, default 50,000) */
  holders: number;
  /** only the endpoints whose key contains one of these (`--only tx,recent`); ceilings always run */
  only: string[] | null;
  /** PGlite data directory (`--data-dir`, default memory://); ignored when DATABASE_URL is set */
  dataDir: string | null;
  /** write the results as JSON here too (`--json <path>`) */
  jsonPath: string | null;
  /** write a CPU profile of the server per measured endpoint into this directory (`--profile <dir>`) */
  profileDir: string | null;
};

const USAGE = `usage: npm run bench:api -- [--seconds 10] [--warmup 2] [--connections 50] [--transactions 100000]
       [--holders 50000] [--only key,key] [--data-dir <dir>] [--json results.json] [--profile <dir>]
Runs on PGlite (memory://, or --data-dir) by default; on a fresh database of the PostgreSQL server of
DATABASE_URL when it is set (created and dropped).`;

/** Parse the command line of `npm run bench:api`; `--help` throws the usage text. */
export function parseApiBenchArgs(argv: readonly string[]): ApiBenchArgs {
  const args: ApiBenchArgs = {
    seconds: 10,
    warmupSeconds: 2,
    connections: 50,
    transactions: 100_000,
    holders: 50_000,
    only: null,
    dataDir: null,
    jsonPath: null,
    profileDir: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new NonRetryableError(`${flag} needs a value\n${USAGE}`);
      return v;
    };
    switch (flag) {
      case "--seconds":
        args.seconds = positive(flag, value());
        break;
      case "--warmup":
        args.warmupSeconds = positive(flag, value(), 0);
        break;
      case "--connections":
        args.connections = positive(flag, value());
        break;
      case "--transactions":
        args.transactions = positive(flag, value());
        break;
      case "--holders":
        args.holders = positive(flag, value());
        break;
      case "--only":
        args.only = value().split(",").filter(Boolean);
        break;
      case "--data-dir":
        args.dataDir = value();
        break;
      case "--json":
        args.jsonPath = value();
        break;
      case "--profile":
        args.profileDir = value();
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

function positive(flag: string, text: string, min = 1): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min)
    throw new NonRetryableError(`${flag}: not an integer >= ${min}: ${text}`);
  return n;
}
