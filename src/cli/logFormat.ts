import { ConfigError } from "../internal/errors.ts";

export type LogFormat = "pretty" | "json";

/**
 * How log lines are written (SPEC §1 `LOG_FORMAT`, §12): `pretty` for people, `json` (pino's lines) for
 * machines. Unset, it is `pretty` when stdout is a terminal and `json` otherwise, so a pipe, a file, systemd
 * or a container runtime keeps getting one JSON object per line without being told.
 * @throws {ConfigError} for any other value, naming it.
 */
export function logFormat(value: string | undefined, isTerminal: boolean): LogFormat {
  if (value === undefined || value === "") return isTerminal ? "pretty" : "json";
  if (value === "pretty" || value === "json") return value;
  throw new ConfigError([`LOG_FORMAT: must be pretty or json (got '${value}')`]);
}
