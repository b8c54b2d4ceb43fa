import { ConfigError } from "../internal/errors.ts";
import { isRecord } from "../internal/isRecord.ts";
import { formatKeyPath, type KeyPathSegment } from "./keyPath.ts";

/** The environment the config is read against. The CLI passes `process.env`; tests pass plain objects. */
export type Env = Readonly<Record<string, string | undefined>>;

// `${NAME}` is a reference; `$${NAME}` is the escape for a literal `${NAME}`.
const REFERENCE = /\$(\$?)\{([^}]*)\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replace every `${NAME}` inside every string value of a parsed config file with `env[NAME]` (SPEC §1
 * "Environment"). Keys are left alone, so are non-string values. `$${NAME}` yields a literal `${NAME}`.
 * An empty variable counts as set (POSIX), an unset one is an error.
 *
 * @throws {ConfigError} one issue per unset variable or malformed reference, each naming the key path:
 *   `rpc.urls[0]: environment variable RPC_URL is not set`.
 */
export function interpolateEnv<T>(value: T, env: Env): T {
  const issues: string[] = [];
  const out = walk(value, env, [], issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return out as T;
}

function walk(value: unknown, env: Env, path: KeyPathSegment[], issues: string[]): unknown {
  if (typeof value === "string") return substitute(value, env, path, issues);
  if (Array.isArray(value)) return value.map((item, index) => walk(item, env, [...path, index], issues));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = walk(item, env, [...path, key], issues);
    return out;
  }
  return value;
}

function substitute(text: string, env: Env, path: KeyPathSegment[], issues: string[]): string {
  return text.replace(REFERENCE, (match, dollar: string, name: string) => {
    if (dollar === "$") return match.slice(1);
    if (!NAME.test(name)) {
      issues.push(`${formatKeyPath(path)}: \${${name}} is not a valid environment variable reference`);
      return match;
    }
    const replacement = env[name];
    if (replacement === undefined) {
      issues.push(`${formatKeyPath(path)}: environment variable ${name} is not set`);
      return match;
    }
    return replacement;
  });
}
