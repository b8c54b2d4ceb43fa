import { Settings } from "typebox/system";
import Value from "typebox/value";
import { ConfigError } from "../internal/errors.ts";
import { isRecord } from "../internal/isRecord.ts";
import { formatValidationErrors } from "./formatValidationErrors.ts";
import { type ConfigFile, ConfigFileSchema } from "./schema.ts";

// typebox stops collecting after `maxErrors` (default 8); a config report should list every problem.
const MAX_ERRORS = 500;

/**
 * Validate a parsed config file (after env interpolation) against `ConfigFileSchema` and fill in its
 * defaults. A key with an empty value (YAML `key:` with nothing after it, JSON `null`) counts as absent, so a
 * section whose entries are all commented out falls back to its defaults. The input is not mutated.
 *
 * Also the way to turn a hand-written object into a `ConfigFile` in tests and the demo.
 *
 * @throws {ConfigError} with one issue per problem (`chain.id: is required`, `api.foo: unknown key`,
 *   `indexer.logChunkBlocks: must be an integer`, `tokens[0].address: not a 20-byte hex address`).
 */
export function parseConfigFile(raw: unknown): ConfigFile {
  const value = Value.Default(ConfigFileSchema, dropNullKeys(raw));
  if (Value.Check(ConfigFileSchema, value)) return value;
  const previous = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: MAX_ERRORS });
  try {
    const errors = Value.Errors(ConfigFileSchema, value);
    throw new ConfigError(formatValidationErrors(ConfigFileSchema, value, errors));
  } finally {
    Settings.Set({ maxErrors: previous });
  }
}

/** A deep copy without object keys whose value is `null`. */
function dropNullKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNullKeys);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== null) out[key] = dropNullKeys(item);
  return out;
}
