import { errorMessage } from "../../src/internal/errors.ts";

export type RunBenchOptions = {
  /** Undo what the run started (processes, databases, files): after `main`, whatever its outcome. */
  cleanup(): Promise<void>;
  /** What to undo on SIGINT/SIGTERM before exiting with 130 (default `cleanup`). */
  onSignal?(signal: NodeJS.Signals): Promise<void>;
};

/**
 * The skeleton every `npm run bench:<name>` entry shares: run `main`; when it throws (`--help` throws the usage),
 * print `bench:<name> failed: <message>` and set exit code 1; then `cleanup`. On SIGINT or SIGTERM, `onSignal`
 * (or `cleanup`) runs and the process exits with 130.
 */
export async function runBench(
  name: string,
  main: () => Promise<void>,
  options: RunBenchOptions,
): Promise<void> {
  const onSignal = options.onSignal ?? options.cleanup;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      void onSignal(signal).finally(() => process.exit(130));
    });
  }
  try {
    await main();
  } catch (error) {
    process.stderr.write(`bench:${name} failed: ${errorMessage(error)}\n`);
    process.exitCode = 1;
  } finally {
    await options.cleanup();
  }
}
