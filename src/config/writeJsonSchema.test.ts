// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config values with ${NAME} references, not templates
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import Value from "typebox/value";
import { expect, test } from "vitest";
import { parseConfigText } from "./parseConfigText.ts";
import { buildJsonSchema, JSON_SCHEMA_PATH, renderJsonSchema } from "./writeJsonSchema.ts";

test("default: the committed docs/config.schema.json is what `npm run config:schema` generates", () => {
  expect(readFileSync(JSON_SCHEMA_PATH, "utf8")).toBe(renderJsonSchema());
});

test("behavior: draft 2020-12 with $id and title", () => {
  const schema = buildJsonSchema();
  expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
  expect(schema.$id).toBe("urn:protoscan:config");
  expect(schema.title).toBe("protoscan configuration");
  expect(schema.type).toBe("object");
  expect(schema.additionalProperties).toBe(false);
});

test("behavior: keys with defaults are optional, x-error is stripped", () => {
  const schema = buildJsonSchema();
  const text = JSON.stringify(schema);
  expect(schema.required).toEqual(["chain"]);
  expect(text).not.toContain("x-error");
  expect(text).not.toContain("~kind");
  const properties = schema.properties as Record<
    string,
    { required?: string[]; properties?: Record<string, unknown> }
  >;
  expect(properties.chain?.required).toEqual(["id"]);
  expect(properties.indexer?.required).toBeUndefined();
  expect(properties.indexer?.properties?.logChunkBlocks).toEqual({
    type: "integer",
    minimum: 1,
    default: 5000,
  });
});

test("behavior: the example config, as written, validates against the published schema", () => {
  const schema = JSON.parse(readFileSync(JSON_SCHEMA_PATH, "utf8"));
  const example = fileURLToPath(new URL("../../protoscan.config.example.yaml", import.meta.url));
  const raw = parseConfigText(readFileSync(example, "utf8"), example);
  expect(Value.Errors(schema, raw)).toEqual([]);
  expect(Value.Check(schema, { chain: { id: 1 }, rpc: { urls: ["${RPC_URL}"] } })).toBe(true);
  expect(Value.Check(schema, { chain: { id: 1 }, rpc: { urls: ["localhost:8545"] } })).toBe(false);
  expect(Value.Check(schema, { chain: { id: 1 }, api: { foo: 1 } })).toBe(false);
});
