import { isRecord } from "../internal/isRecord.ts";
import type { Env } from "./interpolateEnv.ts";

/**
 * Apply the environment variables that override config keys (SPEC §1 "Environment"): `RPC_URL`, a
 * comma-separated list of JSON-RPC endpoints, replaces `rpc.urls` (other `rpc` keys are kept). An unset or
 * blank `RPC_URL` changes nothing.
 *
 * Works on a parsed file before validation as well as on a typed `ConfigFile` (the CLI reuses it for
 * in-memory configs); the input is never mutated.
 */
export function applyEnvOverrides<T>(file: T, env: Env): T {
  const urls = parseUrlList(env.RPC_URL);
  if (urls.length === 0 || !isRecord(file)) return file;
  const rpc = isRecord(file.rpc) ? file.rpc : {};
  return { ...file, rpc: { ...rpc, urls } } as T;
}

/** `"a, b,,c"` -> `["a", "b", "c"]`. */
function parseUrlList(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(",")
    .map((url) => url.trim())
    .filter((url) => url !== "");
}
