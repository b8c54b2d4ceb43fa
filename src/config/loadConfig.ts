import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { ConfigError } from "../internal/errors.ts";
import { isRecord } from "../internal/isRecord.ts";
import { applyEnvOverrides } from "./applyEnvOverrides.ts";
import { type Env, interpolateEnv } from "./interpolateEnv.ts";
import { parseConfigFile } from "./parseConfigFile.ts";
import { parseConfigText } from "./parseConfigText.ts";
import { resolveConfig } from "./resolveConfig.ts";
import type { Config } from "./schema.ts";

export type LoadConfigParameters = {
  /** Path of the config file (`PROTOSCAN_CONFIG`), relative to the working directory or absolute. */
  path: string;
  /** The environment for `${NAME}` interpolation and overrides. The CLI passes `process.env`. */
  env: Env;
};

/**
 * Load the config file (SPEC §1 "Config file"): read it as YAML or JSON by extension, apply env overrides
 * (`RPC_URL` replaces `rpc.urls`, see `applyEnvOverrides`), replace `${NAME}` in every string value from
 * `env` (see `interpolateEnv`), validate against `ConfigFileSchema` with its defaults, and resolve it
 * (cross-field checks, ABI files relative to the config file, lowercase addresses, derived defaults).
 *
 * Overrides are applied before interpolation, so a `${VAR}` inside `rpc.urls` need not be set when
 * `RPC_URL` replaces the list.
 *
 * @example
 * const config = await loadConfig({ path: process.env.PROTOSCAN_CONFIG ?? "./protoscan.config.yaml", env: process.env });
 * @throws {ConfigError} whose `issues` list every problem found at the failing stage, each naming its key
 *   path (`rpc.urls[0]: environment variable RPC_URL is not set`).
 */
export async function loadConfig({ path, env }: LoadConfigParameters): Promise<Config> {
  const absolute = resolve(path);
  let text: string;
  try {
    text = await readFile(absolute, "utf8");
  } catch (error) {
    const code = isRecord(error) && typeof error.code === "string" ? error.code : String(error);
    throw new ConfigError([`cannot read config file ${path} (${code})`], { cause: error });
  }
  const raw = parseConfigText(text, absolute);
  const file = parseConfigFile(interpolateEnv(applyEnvOverrides(raw, env), env));
  return { ...resolveConfig(file, dirname(absolute)), path: absolute };
}
