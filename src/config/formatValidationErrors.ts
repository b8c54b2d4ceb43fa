import type { TLocalizedValidationError } from "typebox/error";
import { isRecord } from "../internal/isRecord.ts";
import { formatKeyPath, pointerToSegments } from "./keyPath.ts";

/**
 * Turn typebox validation errors into one readable line per problem, each naming the key path
 * (`indexer.logChunkBlocks: must be an integer`). Uses the schema's `x-error` annotation when the failing
 * node carries one (`protocols[0].contracts[1].address: not a 20-byte hex address`), reports missing keys as
 * `chain.id: is required` and extra keys as `api.foo: unknown key`. Branch errors of a union are folded into
 * one line for the union. Lines are de-duplicated and keep the validator's order.
 *
 * @param schema the schema the value was checked against (to read `x-error` and union branches)
 * @param value the checked value (to tell array indexes from object keys)
 */
export function formatValidationErrors(
  schema: unknown,
  value: unknown,
  errors: readonly TLocalizedValidationError[],
): string[] {
  const unions = errors
    .filter((error) => error.keyword === "anyOf")
    .map((error) => `${error.schemaPath}/anyOf/`);
  const lines: string[] = [];
  for (const error of errors) {
    if (unions.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    const segments = pointerToSegments(error.instancePath, value);
    switch (error.keyword) {
      case "required":
        for (const key of error.params.requiredProperties)
          lines.push(`${formatKeyPath([...segments, key])}: is required`);
        break;
      case "additionalProperties":
        for (const key of error.params.additionalProperties)
          lines.push(`${formatKeyPath([...segments, key])}: unknown key`);
        break;
      case "boolean":
        // `additionalProperties: false` reports each extra key as a failed `false` schema.
        lines.push(
          `${formatKeyPath(segments)}: ${error.schemaPath.endsWith("/additionalProperties") ? "unknown key" : "is not allowed"}`,
        );
        break;
      default: {
        const node = schemaAt(schema, error.schemaPath);
        const annotated = isRecord(node) && typeof node["x-error"] === "string" ? node["x-error"] : undefined;
        lines.push(`${formatKeyPath(segments)}: ${annotated ?? describe(error, node)}`);
      }
    }
  }
  return [...new Set(lines)];
}

const TYPE_NAMES: Record<string, string> = {
  integer: "an integer",
  number: "a number",
  string: "a string",
  boolean: "true or false",
  array: "a list",
  object: "an object (a map of keys)",
  null: "null",
};

function describe(error: TLocalizedValidationError, node: unknown): string {
  switch (error.keyword) {
    case "type": {
      const types = [error.params.type].flat();
      return `must be ${types.map((type) => TYPE_NAMES[type] ?? type).join(" or ")}`;
    }
    case "anyOf": {
      const branches = isRecord(node) && Array.isArray(node.anyOf) ? node.anyOf : [];
      const constants = branches.map((branch) =>
        isRecord(branch) && "const" in branch ? branch.const : undefined,
      );
      if (constants.length > 0 && constants.every((constant) => constant !== undefined)) {
        return `must be one of ${constants.map((constant) => JSON.stringify(constant)).join(", ")}`;
      }
      return "does not match any of the allowed forms";
    }
    case "const":
      return `must be ${JSON.stringify(error.params.allowedValue)}`;
    case "enum":
      return `must be one of ${error.params.allowedValues.map((v) => JSON.stringify(v)).join(", ")}`;
    case "minimum":
      return `must be >= ${error.params.limit}`;
    case "maximum":
      return `must be <= ${error.params.limit}`;
    case "exclusiveMinimum":
      return `must be > ${error.params.limit}`;
    case "exclusiveMaximum":
      return `must be < ${error.params.limit}`;
    case "minLength":
      return error.params.limit === 1
        ? "must not be empty"
        : `must have at least ${error.params.limit} characters`;
    case "maxLength":
      return `must have at most ${error.params.limit} characters`;
    case "minItems":
      return error.params.limit === 1
        ? "must not be empty"
        : `must have at least ${error.params.limit} items`;
    case "maxItems":
      return `must have at most ${error.params.limit} items`;
    case "pattern":
      return `must match ${error.params.pattern}`;
    default:
      return error.message;
  }
}

/** Follow a schema path (`#/properties/rpc/properties/urls/items`) into the schema object. */
function schemaAt(schema: unknown, schemaPath: string): unknown {
  let node = schema;
  for (const raw of schemaPath.replace(/^#\/?/, "").split("/")) {
    if (raw === "") continue;
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isRecord(node)) node = node[key];
    else return undefined;
  }
  return node;
}
