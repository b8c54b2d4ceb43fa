import { basename, extname } from "node:path";
import { parseDocument } from "yaml";
import { ConfigError } from "../internal/errors.ts";

/**
 * Parse the text of a config file as YAML (`.yaml`, `.yml`) or JSON (`.json`), chosen by the file name's
 * extension. YAML is read with the YAML 1.2 core schema, except that hex literals stay strings, so an
 * unquoted address (`address: 0xAbC…`) is not turned into a lossy number. Duplicate keys are errors.
 *
 * @throws {ConfigError} naming the file: an unknown extension, a syntax error (with line and column), or an
 *   empty file.
 */
export function parseConfigText(text: string, fileName: string): unknown {
  const name = basename(fileName);
  const extension = extname(fileName).toLowerCase();
  let value: unknown;
  if (extension === ".yaml" || extension === ".yml") value = parseYaml(text, name);
  else if (extension === ".json") value = parseJson(text, name);
  else throw new ConfigError([`${name}: unknown config format "${extension}" (use .yaml, .yml or .json)`]);
  if (value === null || value === undefined) throw new ConfigError([`${name}: the config file is empty`]);
  return value;
}

function parseYaml(text: string, name: string): unknown {
  const document = parseDocument(text, {
    customTags: (tags) => tags.filter((tag) => !(typeof tag === "object" && tag.format === "HEX")),
  });
  if (document.errors.length > 0) {
    // yaml's messages end with a code excerpt after a blank line; the first line carries line and column.
    throw new ConfigError(
      document.errors.map(
        (error) => `${name}: invalid YAML: ${error.message.split("\n")[0]?.replace(/:$/, "")}`,
      ),
    );
  }
  return document.toJS();
}

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${name}: invalid JSON: ${(error as Error).message}`], { cause: error });
  }
}
