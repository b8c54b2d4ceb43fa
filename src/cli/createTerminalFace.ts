import { createLogger, type Logger } from "../internal/logger.ts";
import { type BackfillSample, createBackfillMeter, progressLine } from "./backfillProgress.ts";
import { createTerminalOutput, type TerminalOutput } from "./createTerminalOutput.ts";
import { type LogFormat, logFormat } from "./logFormat.ts";

/** How often the progress line is redrawn. */
const PROGRESS_EVERY_MS = 250;

/**
 * What a person sees of protoscan (SPEC §12): on a terminal, readable log lines and a live backfill
 * progress line; elsewhere, or with `LOG_FORMAT=json`, pino's JSON lines exactly as before.
 */
export type TerminalFace = {
  format: LogFormat;
  /** where the progress line is drawn: stdout when it is a terminal and the format is pretty, else null */
  terminal: TerminalOutput | null;
  /** A logger writing in this face's format (secrets scrubbed before formatting). */
  logger(options: { level: string; secrets?: readonly string[] }): Logger;
};

/**
 * Choose the face from `LOG_FORMAT` and whether stdout is a terminal. Readable lines come from pino-pretty
 * (loaded only then): it formats the scrubbed JSON line, so what it prints never holds a secret either.
 */
export async function createTerminalFace(
  logFormatValue: string | undefined,
  stdout: NodeJS.WriteStream,
): Promise<TerminalFace> {
  const isTerminal = stdout.isTTY === true;
  const format = logFormat(logFormatValue, isTerminal);
  if (format === "json") {
    return { format, terminal: null, logger: (options) => createLogger({ ...options, destination: stdout }) };
  }
  const { prettyFactory } = await import("pino-pretty");
  const formatLine = prettyFactory({
    colorize: isTerminal,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname,service",
  });
  const terminal = isTerminal ? createTerminalOutput(stdout) : null;
  return {
    format,
    terminal,
    logger: (options) => createLogger({ ...options, formatLine, destination: terminal ?? stdout }),
  };
}

/**
 * Redraw the backfill progress line from `read()` every 250 ms until the returned function is called; the
 * line is shown only while a backfill runs (backfillProgress.ts).
 */
export function showBackfillProgress(
  terminal: TerminalOutput,
  read: () => Promise<BackfillSample>,
): () => void {
  const meter = createBackfillMeter();
  let stopped = false;
  let reading = false;
  const timer = setInterval(() => {
    if (reading) return;
    reading = true;
    read()
      .then((sample) => {
        if (stopped) return;
        const figures = meter.sample(sample);
        terminal.status(figures ? progressLine(figures) : null);
      })
      .catch(() => {})
      .finally(() => {
        reading = false;
      });
  }, PROGRESS_EVERY_MS);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
    terminal.status(null);
  };
}
