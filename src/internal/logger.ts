import { Writable } from "node:stream";
import pino, { type Logger } from "pino";
import { redactSecrets } from "./redact.ts";

export type { Logger };

export type LoggerOptions = {
  level?: string;
  /** Strings that must never appear in a log line (RPC URL credentials, signing keys, API keys). */
  secrets?: readonly string[];
  /** Where lines go (default stdout). Tests pass a collector. */
  destination?: { write(line: string): unknown };
  /**
   * Turns each scrubbed JSON line into what is written (the CLI's readable lines on a terminal); without
   * it, pino's JSON lines are written as they are.
   */
  formatLine?: (line: string) => string;
};

/**
 * A pino logger whose every serialized line is scrubbed of the configured secrets before it is written.
 * Scrubbing the final line (instead of relying on each call site) is what makes the guarantee hold for
 * error objects, causes and messages quoted from providers.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = [...(options.secrets ?? [])].sort((a, b) => b.length - a.length);
  const target = options.destination ?? process.stdout;
  const format = options.formatLine;
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      const line = typeof chunk === "string" ? chunk : chunk.toString("utf8");
      const scrubbed = secrets.length > 0 ? redactSecrets(line, secrets) : line;
      target.write(format ? format(scrubbed) : scrubbed);
      callback();
    },
  });
  return pino({ level: options.level ?? "info", base: { service: "protoscan" } }, stream);
}

/** A logger that writes nothing (tests that do not look at logs). */
export function createSilentLogger(): Logger {
  return pino({ level: "silent" });
}
