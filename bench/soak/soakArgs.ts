import { NonRetryableError } from "../../src/internal/errors.ts";
import { parseFlags } from "../_shared/cliFlags.ts";

export type SoakArgs = {
  /** how long the load runs, after set-up and catch-up (`--minutes N` / `--seconds N`; default 10 minutes) */
  durationSeconds: number;
  /** length of one reporting window (`--window S`; default 60 s, or a sixth of a shorter run) */
  windowSeconds: number;
  /** steady API read rate in requests per second (`--rate N`, default 100) */
  rate: number;
  /** WebSocket clients kept connected while they churn (`--ws-clients N`, default 20) */
  wsClients: number;
  /** one WebSocket client leaves and a new one joins every this many ms (`--churn-ms N`, default 1000) */
  churnMs: number;
  /** one signed webhook delivery of a fresh shared-contract transaction every this many ms (`--webhook-ms`, 4000) */
  webhookMs: number;
  /** write the results as JSON here too (`--json <path>`) */
  jsonPath: string | null;
};

const USAGE = `usage: npm run bench:soak -- [--minutes N | --seconds N | --smoke] [--window S] [--rate N]
       [--ws-clients N] [--churn-ms N] [--webhook-ms N] [--json out.json]
--smoke is a quick check: 60 s in 10 s windows. protoscan runs on PGlite in a temporary directory, or on a
fresh database of the DATABASE_URL server when set.`;

/** Parse the command line of `npm run bench:soak`; `--help` throws the usage text. */
export function parseSoakArgs(argv: readonly string[]): SoakArgs {
  let durationSeconds = 600;
  let windowSeconds: number | null = null;
  const args: Omit<SoakArgs, "durationSeconds" | "windowSeconds"> = {
    rate: 100,
    wsClients: 20,
    churnMs: 1000,
    webhookMs: 4000,
    jsonPath: null,
  };
  parseFlags(argv, USAGE, (flag, read) => {
    if (flag === "--minutes") durationSeconds = read.integer() * 60;
    else if (flag === "--seconds") durationSeconds = read.integer();
    else if (flag === "--smoke") {
      durationSeconds = 60;
      windowSeconds = 10;
    } else if (flag === "--window") windowSeconds = read.integer();
    else if (flag === "--rate") args.rate = read.integer();
    else if (flag === "--ws-clients") args.wsClients = read.integer();
    else if (flag === "--churn-ms") args.churnMs = read.integer();
    else if (flag === "--webhook-ms") args.webhookMs = read.integer();
    else if (flag === "--json") args.jsonPath = read.text();
    else return false;
    return true;
  });
  windowSeconds ??= Math.min(60, Math.max(5, Math.floor(durationSeconds / 6)));
  if (windowSeconds * 3 > durationSeconds) {
    // The RSS verdict compares the window after the warm-up one with the last: it needs three windows.
    throw new NonRetryableError(
      `--window ${windowSeconds}: a run needs at least three windows (${durationSeconds} s)`,
    );
  }
  return { durationSeconds, windowSeconds, ...args };
}
