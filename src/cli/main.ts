import { parseArgs } from "node:util";
import { BaseError, ConfigError, errorMessage } from "../internal/errors.ts";
import { CODE } from "../internal/repoRoot.ts";
import { tuneV8 } from "../internal/tuneV8.ts";
import type { Database } from "../store/createDatabase.ts";
import { createTerminalFace } from "./createTerminalFace.ts";
import type { Role } from "./startProtoscan.ts";
import { untilSignal } from "./untilSignal.ts";

// Subsystems are imported once a command needs them, so `--help` and usage errors answer at once.

/** A graceful stop that takes longer than this ends the process anyway (exit code 1). */
const SHUTDOWN_DEADLINE_MS = 9_000;

const HELP: Record<string, string> = {
  main: `protoscan — indexer and explorer API for EVM protocols

Usage: protoscan <command> [options]

Commands:
  start     index the configured protocols and serve the API (applies pending migrations first)
  migrate   apply pending database migrations and exit
  demo      start a local anvil chain with demo protocols, protoscan on it, and live activity

Run 'protoscan <command> --help' for a command's options.

Environment:
  PROTOSCAN_CONFIG  config file (default ./protoscan.config.yaml)
  RPC_URL           JSON-RPC endpoint(s), comma-separated; overrides rpc.urls
  DATABASE_URL      postgres://… for PostgreSQL; unset for embedded PGlite in DATA_DIR
  DATA_DIR          PGlite directory (default ./data; memory:// for none)
  HOST / PORT       where the API listens (default 127.0.0.1 / 3000)
  LOG_LEVEL         pino level (default info)
  LOG_FORMAT        pretty (readable lines and a progress line) or json (default: pretty on a
                    terminal, else json)`,
  start: `Usage: protoscan start [--role all|api|indexer]

Index and serve (applies pending migrations first). Roles:
  all      (default) the writers + the API + WebSocket in one process
  api      HTTP API + WebSocket (webhook and track-tx intake included); any number of them
  indexer  the writers: polling, webhook inbox, track-tx watcher, price refresh; serves only
           /healthz, /readyz and /metrics on HOST:PORT
api and indexer need PostgreSQL (DATABASE_URL): PGlite serves one process, which must run --role all.
On PostgreSQL the processes that run the writers elect one active writer (an advisory lock); the
others stand by and take over when it dies. SIGTERM stops gracefully (exit 0). See docs/operations.md.`,
  migrate: `Usage: protoscan migrate

Apply pending migrations to the database named by DATABASE_URL (or PGlite in DATA_DIR) and exit.`,
  demo: `Usage: protoscan demo

Start anvil on a free port, deploy the demo protocols (a Uniswap V2 exchange, a staking vault, tokens),
write their config into DATA_DIR (default ./demo-data), start protoscan on PGlite (a fresh database in
DATA_DIR/pglite each run: the chain is new each run) and generate activity. Ctrl-C stops everything.`,
};

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { help: { type: "boolean", short: "h" }, role: { type: "string" } },
  });
  const command = positionals[0];
  if (!command || command === "help") {
    console.log(HELP.main);
    return command ? 0 : values.help ? 0 : 1;
  }
  if (!(command in HELP) || command === "main") {
    console.error(`unknown command '${command}'\n\n${HELP.main}`);
    return 1;
  }
  if (values.help) {
    console.log(HELP[command]);
    return 0;
  }

  const env = process.env;
  const logLevel = env.LOG_LEVEL ?? "info";
  const host = env.HOST ?? "127.0.0.1";
  const port = parsePort(env.PORT ?? "3000");
  const face = await createTerminalFace(env.LOG_FORMAT, process.stdout);

  if (command === "demo") {
    const { runDemoCommand } = await import("./demoCommand.ts");
    return runDemoCommand({ host, port, dataDir: env.DATA_DIR ?? "./demo-data", logLevel, face });
  }

  const { loadConfig } = await import("../config/loadConfig.ts");
  const config = await loadConfig({ path: env.PROTOSCAN_CONFIG ?? "./protoscan.config.yaml", env });
  if (command === "migrate") {
    const { createDatabase } = await import("../store/createDatabase.ts");
    const { migrate } = await import("../store/migrate.ts");
    const logger = face.logger({ level: logLevel });
    const database = await createDatabase({
      databaseUrl: env.DATABASE_URL,
      dataDir: env.DATA_DIR ?? "./data",
      logger,
    });
    try {
      const { applied } = await migrate(database);
      logger.info({ applied, database: database.label, code: CODE }, "migrations up to date");
    } finally {
      await database.close();
    }
    return 0;
  }

  const role = values.role ?? "all";
  if (role !== "all" && role !== "api" && role !== "indexer") {
    console.error(`--role must be all, api or indexer (got '${role}')`);
    return 1;
  }
  const { configSecrets } = await import("../config/configSecrets.ts");
  const logger = face.logger({ level: logLevel, secrets: configSecrets(config) });
  const databaseUrl = env.DATABASE_URL;
  const dataDir = env.DATA_DIR ?? "./data";
  // The database opens (PGlite in its worker thread, or the first PostgreSQL connection) while the rest of
  // protoscan's modules load on this thread: on two cores the two overlap (docs/performance.md, "First start").
  // A role PGlite cannot serve is refused by startProtoscan before any database is opened.
  let opening: Promise<Database> | undefined;
  if (databaseUrl || role === "all") {
    const { createDatabase } = await import("../store/createDatabase.ts");
    opening = createDatabase({ databaseUrl, dataDir, logger });
    opening.catch(() => undefined);
  }
  const { startProtoscan } = await import("./startProtoscan.ts");
  // Signals are heard from before the start-up: a SIGTERM or Ctrl-C while protoscan starts stops it once it has
  // started, within the shutdown deadline. Heard only after the start, one sent on seeing the "listening" line
  // (a test, a rollout) could come in between and kill the process by the default action (1 start in 15 on
  // a loaded machine: exit by signal instead of 0).
  const signalled = untilSignal();
  const startUp = new AbortController();
  signalled.then((signal) => {
    armShutdownDeadline(logger);
    startUp.abort(new StartInterrupted(signal));
  });
  const protoscan = await startProtoscan({
    config,
    ...(face.terminal ? { progress: face.terminal } : {}),
    role: role as Role,
    host,
    port,
    databaseUrl,
    dataDir,
    logLevel,
    logger,
    ...(opening ? { database: opening } : {}),
    signal: startUp.signal,
  }).catch((error: unknown) => {
    if (error instanceof StartInterrupted) return null;
    throw error;
  });
  if (!protoscan) {
    // What it had opened is closed (startProtoscan's own shutdown): nothing was left half-done.
    logger.info(
      { signal: (startUp.signal.reason as StartInterrupted).signal },
      "stopped during the start-up",
    );
    return 0;
  }
  // A signal stops the process (exit 0); so does a writer that stopped for good (the database belongs to
  // another chain), with exit 1 so that an orchestrator shows the failure instead of a process that never
  // indexes (docs/operations.md).
  const outcome = await Promise.race([
    signalled.then((signal) => ({ signal, error: null })),
    protoscan.failed.then((error) => ({ signal: null, error })),
  ]);
  if (outcome.error) protoscan.common.logger.error({ err: errorMessage(outcome.error) }, "shutting down");
  else protoscan.common.logger.info({ signal: outcome.signal }, "shutting down");
  armShutdownDeadline(protoscan.common.logger);
  await protoscan.stop();
  protoscan.common.logger.info("stopped");
  if (!outcome.error) return 0;
  console.error(`protoscan: ${errorMessage(outcome.error)}`);
  return 1;
}

/** Why the start-up was aborted: a signal came while it waited (for the node). */
class StartInterrupted extends Error {
  constructor(readonly signal: string) {
    super(`${signal} during the start-up`);
    this.name = "StartInterrupted";
  }
}

let shutdownDeadline: NodeJS.Timeout | undefined;

/**
 * End the process with exit code 1 if it has not ended SHUTDOWN_DEADLINE_MS from the first call: orchestrators
 * wait about 10 s after SIGTERM before SIGKILL, never leave it to them. Later calls change nothing.
 */
function armShutdownDeadline(logger: { error(fields: object, message: string): void }): void {
  shutdownDeadline ??= setTimeout(() => {
    logger.error({ afterMs: SHUTDOWN_DEADLINE_MS }, "shutdown did not finish in time: exiting");
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS);
  shutdownDeadline.unref();
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError([`PORT: not a port number: ${value}`]);
  return port;
}

tuneV8();
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    // Config and startup errors are ours and safe to print; anything else gets a short message too.
    const message = error instanceof BaseError ? error.message : errorMessage(error);
    console.error(`protoscan: ${message}`);
    process.exit(error instanceof ConfigError ? 2 : 1);
  },
);
