import { parseFlags } from "../_shared/cliFlags.ts";

export const REALTIME_PHASES = ["polling", "webhook", "track-tx", "fanout"] as const;
export type RealtimePhase = (typeof REALTIME_PHASES)[number];

export type RealtimeArgs = {
  /** samples per freshness path (`--samples`, default 100) */
  samples: number;
  /** shared-contract transactions mined per block for the webhook and track-tx paths (`--per-block`, 10) */
  perBlock: number;
  /** WebSocket clients of the fan-out phase (`--clients`, 1000) */
  clients: number;
  /** child processes holding them (`--client-procs`, 4) */
  clientProcesses: number;
  /** protocol transactions per 1 s block during the fan-out phase (`--tx-per-block`, 50) */
  txPerBlock: number;
  /** fan-out load before measuring (`--warmup`, 5 s) */
  warmupSeconds: number;
  /** fan-out load measured (`--seconds`, 20 s) */
  measureSeconds: number;
  /** phases to run (`--phases polling,webhook,track-tx,fanout`, default all) */
  phases: RealtimePhase[];
  /** write the results as JSON here too (`--json <path>`) */
  jsonPath: string | null;
  /** write a V8 CPU profile of the protoscan process into this directory (`--cpu-prof <dir>`) */
  cpuProfileDir: string | null;
};

const USAGE = `usage: npm run bench:realtime -- [--samples N] [--per-block N] [--clients N] [--client-procs N]
       [--tx-per-block N] [--warmup S] [--seconds S] [--phases polling,webhook,track-tx,fanout] [--json out.json]
       [--cpu-prof dir]
protoscan runs on PGlite in a temporary directory, or on a fresh database of the DATABASE_URL server when set.`;

/** Parse the command line of `npm run bench:realtime`; `--help` throws the usage text. */
export function parseRealtimeArgs(argv: readonly string[]): RealtimeArgs {
  const args: RealtimeArgs = {
    samples: 100,
    perBlock: 10,
    clients: 1000,
    clientProcesses: 4,
    txPerBlock: 50,
    warmupSeconds: 5,
    measureSeconds: 20,
    phases: [...REALTIME_PHASES],
    jsonPath: null,
    cpuProfileDir: null,
  };
  parseFlags(argv, USAGE, (flag, read) => {
    if (flag === "--samples") args.samples = read.integer();
    else if (flag === "--per-block") args.perBlock = read.integer();
    else if (flag === "--clients") args.clients = read.integer();
    else if (flag === "--client-procs") args.clientProcesses = read.integer();
    else if (flag === "--tx-per-block") args.txPerBlock = read.integer();
    else if (flag === "--warmup") args.warmupSeconds = read.integer();
    else if (flag === "--seconds") args.measureSeconds = read.integer();
    else if (flag === "--phases") args.phases = read.oneOf(REALTIME_PHASES, "phase");
    else if (flag === "--json") args.jsonPath = read.text();
    else if (flag === "--cpu-prof") args.cpuProfileDir = read.text();
    else return false;
    return true;
  });
  if (args.clientProcesses > args.clients) args.clientProcesses = args.clients;
  return args;
}
