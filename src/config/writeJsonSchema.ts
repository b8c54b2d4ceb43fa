import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { isRecord } from "../internal/isRecord.ts";
import { REPO_ROOT } from "../internal/repoRoot.ts";
import { ConfigFileSchema } from "./schema.ts";

/** Where the generated schema is committed (`npm run config:schema` rewrites it). */
export const JSON_SCHEMA_PATH = join(REPO_ROOT, "docs", "config.schema.json");

/**
 * The JSON Schema (draft 2020-12) of `protoscan.config.yaml`, generated from `ConfigFileSchema` so that the
 * published schema and the loader never disagree (SPEC §1: "The project publishes a JSON Schema of this
 * file"). It describes the file as written: keys with a default are optional, and a string constrained by a
 * pattern may instead hold a `${NAME}` reference. Our `x-error` annotations are
 * stripped: they are messages for protoscan's own loader, and strict validators (Ajv) reject unknown keywords.
 */
export function buildJsonSchema(): Record<string, unknown> {
  const body = strip(JSON.parse(JSON.stringify(ConfigFileSchema)));
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "urn:protoscan:config",
    title: "protoscan configuration",
    description:
      // biome-ignore lint/suspicious/noTemplateCurlyInString: documents the ${NAME} syntax
      "protoscan.config.yaml (or .json). `${NAME}` inside any string value is replaced by the environment variable NAME before validation.",
    ...(isRecord(body) ? body : {}),
  };
}

/** `buildJsonSchema()` as the committed file's text: 2-space JSON with a trailing newline. */
export function renderJsonSchema(): string {
  return `${JSON.stringify(buildJsonSchema(), null, 2)}\n`;
}

/** Write the schema to `path` (default: `docs/config.schema.json`). */
export function writeJsonSchema(path: string = JSON_SCHEMA_PATH): void {
  writeFileSync(path, renderJsonSchema());
}

// A string holding a `${NAME}` reference is valid as written: the loader interpolates before it validates.
const REFERENCE_PATTERN = "(?:\\$\\{[A-Za-z_][A-Za-z0-9_]*\\})";

/**
 * Drop `x-error`, let patterned strings hold `${NAME}` references, and take keys that have a `default` out of `required`: typebox lists them as required
 * because the validated value always has them, but the file as written may leave them out.
 */
function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (key !== "x-error") out[key] = strip(item);
  if (out.type === "string" && typeof out.pattern === "string") {
    out.pattern = `${REFERENCE_PATTERN}|(?:${out.pattern})`;
  }
  const { properties, required } = out;
  if (isRecord(properties) && Array.isArray(required)) {
    const left = required.filter((key) => !(isRecord(properties[key]) && "default" in properties[key]));
    if (left.length > 0) out.required = left;
    else delete out.required;
  }
  return out;
}

// `npm run config:schema` (tsx src/config/writeJsonSchema.ts)
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeJsonSchema();
  console.log(`wrote ${JSON_SCHEMA_PATH}`);
}
