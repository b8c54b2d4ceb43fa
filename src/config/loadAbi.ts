import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError } from "../internal/errors.ts";
import { isRecord } from "../internal/isRecord.ts";
import type { LoadedAbi } from "./schema.ts";

/**
 * Load a contract ABI as the config gives it: an inline array, or the path of a JSON file relative to
 * `baseDir` (the config file's directory; the working directory when null). The file may hold a bare ABI
 * array or a compiler artifact with an `abi` key (Hardhat, Foundry, Truffle, the `build/*.json` files of
 * `@uniswap/v2-core` and `v2-periphery`).
 *
 * `cache` (keyed by absolute path) lets several contracts share one file read.
 *
 * @throws {ConfigError} with one issue without a key path (the caller prefixes it):
 *   `cannot read ./abis/x.json (ENOENT)`, `not valid JSON (./abis/x.json): …`, `not an ABI array (./abis/x.json)`.
 */
export function loadAbi(
  source: string | readonly object[],
  baseDir: string | null,
  cache: Map<string, LoadedAbi> = new Map(),
): LoadedAbi {
  if (typeof source !== "string") {
    if (!isAbiArray(source)) throw new ConfigError(["not an ABI array"]);
    return source;
  }
  const absolute = resolve(baseDir ?? ".", source);
  const cached = cache.get(absolute);
  if (cached !== undefined) return cached;
  let text: string;
  try {
    text = readFileSync(absolute, "utf8");
  } catch (error) {
    throw new ConfigError([`cannot read ${source} (${errorCode(error)})`], { cause: error });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`not valid JSON (${source}): ${(error as Error).message}`], { cause: error });
  }
  const abi = isRecord(parsed) ? parsed.abi : parsed;
  if (!isAbiArray(abi)) throw new ConfigError([`not an ABI array (${source})`]);
  cache.set(absolute, abi);
  return abi;
}

/** An array of ABI entries: objects whose `type`, when present, is a string. */
function isAbiArray(value: unknown): value is LoadedAbi {
  return (
    Array.isArray(value) &&
    value.every((entry) => isRecord(entry) && (entry.type === undefined || typeof entry.type === "string"))
  );
}

function errorCode(error: unknown): string {
  if (isRecord(error) && typeof error.code === "string") return error.code;
  return error instanceof Error ? error.message : String(error);
}
