import { NonRetryableError } from "../../src/internal/errors.ts";

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
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new NonRetryableError(`${flag} needs a value\n${USAGE}`);
      return v;
    };
    const integer = () => positiveInteger(flag, value());
    switch (flag) {
      case "--samples":
        args.samples = integer();
        break;
      case "--per-block":
        args.perBlock = integer();
        break;
      case "--clients":
        args.clients = integer();
        break;
      case "--client-procs":
        args.clientProcesses = integer();
        break;
      case "--tx-per-block":
        args.txPerBlock = integer();
        break;
      case "--warmup":
        args.warmupSeconds = integer();
        break;
      case "--seconds":
        args.measureSeconds = integer();
        break;
      case "--phases":
        args.phases = value()
          .split(",")
          .map((p) => {
            if (!(REALTIME_PHASES as readonly string[]).includes(p)) {
              throw new NonRetryableError(`--phases: unknown phase ${p} (${REALTIME_PHASES.join(", ")})`);
            }
            return p as RealtimePhase;
          });
        break;
      case "--json":
        args.jsonPath = value();
        break;
      case "--cpu-prof":
        args.cpuProfileDir = value();
        break;
      case "--help":
      case "-h":
        throw new NonRetryableError(USAGE);
      default:
        throw new NonRetryableError(`unknown argument ${flag}\n${USAGE}`);
    }
  }
  if (args.clientProcesses > args.clients) args.clientProcesses = args.clients;
  return args;
}

function positiveInteger(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new NonRetryableError(`${flag}: not a positive integer: ${text}`);
  return n;
}
