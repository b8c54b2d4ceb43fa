import { parseFlags } from "../_shared/cliFlags.ts";

export type ApiBenchArgs = {
  /** measured seconds per endpoint (`--seconds`, default 10) */
  seconds: number;
  /** dropped seconds before each measurement (`--warmup`, default 2) */
  warmupSeconds: number;
  /** times every endpoint (ceilings included) is measured, in turn; figures are the medians (`--rounds`, default 1) */
  rounds: number;
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
  /**
   * send no `Accept-Encoding` (`--identity`): every answer, the ceilings' too, is the uncompressed body. By
   * default the load sends `Accept-Encoding: gzip, deflate`, as browsers, fetch, curl --compressed and Python
   * requests do, and the API and the ceilings gzip the bodies of 4 KB or more.
   */
  identity: boolean;
};

const USAGE = `usage: npm run bench:api -- [--seconds 10] [--warmup 2] [--rounds 1] [--connections 50] [--transactions 100000]
       [--holders 50000] [--only key,key] [--data-dir <dir>] [--json results.json] [--profile <dir>] [--identity]
Runs on PGlite (memory://, or --data-dir) by default; on a fresh database of the PostgreSQL server of
DATABASE_URL when it is set (created and dropped).`;

/** Parse the command line of `npm run bench:api`; `--help` throws the usage text. */
export function parseApiBenchArgs(argv: readonly string[]): ApiBenchArgs {
  const args: ApiBenchArgs = {
    seconds: 10,
    warmupSeconds: 2,
    rounds: 1,
    connections: 50,
    transactions: 100_000,
    holders: 50_000,
    only: null,
    dataDir: null,
    jsonPath: null,
    profileDir: null,
    identity: false,
  };
  parseFlags(argv, USAGE, (flag, read) => {
    if (flag === "--seconds") args.seconds = read.integer();
    else if (flag === "--warmup") args.warmupSeconds = read.integer(0);
    else if (flag === "--rounds") args.rounds = read.integer();
    else if (flag === "--connections") args.connections = read.integer();
    else if (flag === "--transactions") args.transactions = read.integer();
    else if (flag === "--holders") args.holders = read.integer();
    else if (flag === "--only") args.only = read.text().split(",").filter(Boolean);
    else if (flag === "--data-dir") args.dataDir = read.text();
    else if (flag === "--json") args.jsonPath = read.text();
    else if (flag === "--profile") args.profileDir = read.text();
    else if (flag === "--identity") args.identity = true;
    else return false;
    return true;
  });
  return args;
}
