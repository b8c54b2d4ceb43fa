import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { ERROR_CODES } from "../../src/api/errorRegistry.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { parseCsv } from "../helpers/parseCsv.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

type Json = Record<string, unknown>;
type Parameter = { name: string; in: string; required?: boolean; schema: Json; example?: unknown };
type Response = { description: string; content?: Record<string, { schema: Json }>; headers?: Json };
type Operation = {
  operationId?: string;
  summary?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, Response>;
  security?: unknown[];
};
type Document = {
  openapi: string;
  info: Json & { title: string; version: string; license?: Json };
  servers?: { url: string }[];
  tags?: { name: string; description?: string }[];
  security?: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; securitySchemes?: Record<string, Json> };
};

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const BASE = "https://protoscan.local/openapi.json";

/** Every operation of the document with its path and method. */
function operationsOf(document: Document): { path: string; method: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ path, method, operation })),
  );
}

/** Every value of `key` anywhere in `node` (e.g. every `$ref`). */
function collect(node: unknown, key: string, found: unknown[] = []): unknown[] {
  if (Array.isArray(node)) for (const item of node) collect(item, key, found);
  else if (typeof node === "object" && node !== null) {
    for (const [k, v] of Object.entries(node)) {
      if (k === key) found.push(v);
      collect(v, key, found);
    }
  }
  return found;
}

/** A JSON Schema 2020-12 validator (OpenAPI 3.1's dialect) that resolves `#/components/schemas/X`. */
function schemaValidator(document: Document) {
  const ajv = new Ajv2020({ strict: true, allErrors: true, strictRequired: false });
  ajv.addFormat("date-time", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i);
  ajv.addFormat("uri", /^[a-z][a-z0-9+.-]*:\S*$/i);
  ajv.addKeyword({ keyword: "example" });
  const rebase = (schema: unknown): Json =>
    JSON.parse(
      JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${BASE}#/$defs/components/$defs/`),
    ) as Json;
  ajv.addSchema({ $id: BASE, $defs: { components: { $defs: rebase(document.components.schemas) } } });
  const cache = new Map<string, ValidateFunction>();
  return (schema: unknown): ValidateFunction => {
    const key = JSON.stringify(schema);
    const cached = cache.get(key);
    if (cached) return cached;
    const validate = ajv.compile(rebase(schema));
    cache.set(key, validate);
    return validate;
  };
}

/** The subset of the OpenAPI 3.1 schema the document uses, strict where a typo would go unnoticed. */
const X = { "^x-": {} };
const MEDIA_MAP = {
  type: "object",
  propertyNames: { pattern: "^[a-z]+/[a-z0-9.+-]+$" },
  additionalProperties: {
    type: "object",
    properties: { schema: { type: "object" }, example: {}, examples: { type: "object" } },
    additionalProperties: false,
  },
};
const OAS_31_SUBSET = {
  type: "object",
  required: ["openapi", "info", "paths"],
  properties: {
    openapi: { type: "string", pattern: "^3\\.1\\.\\d+$" },
    info: {
      type: "object",
      required: ["title", "version"],
      properties: {
        title: { type: "string", minLength: 1 },
        version: { type: "string", minLength: 1 },
        description: { type: "string" },
        license: {
          type: "object",
          required: ["name"],
          properties: { name: { type: "string" }, identifier: { type: "string" }, url: { type: "string" } },
          not: { required: ["identifier", "url"] },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    servers: {
      type: "array",
      items: {
        type: "object",
        required: ["url"],
        properties: { url: { type: "string" }, description: { type: "string" } },
        additionalProperties: false,
      },
    },
    tags: {
      type: "array",
      items: {
        type: "object",
        required: ["name"],
        properties: { name: { type: "string" }, description: { type: "string" } },
        additionalProperties: false,
      },
    },
    security: { type: "array", items: { type: "object", additionalProperties: { type: "array" } } },
    paths: {
      type: "object",
      propertyNames: { pattern: "^/" },
      additionalProperties: {
        type: "object",
        propertyNames: { enum: METHODS },
        additionalProperties: { $ref: "#/$defs/operation" },
      },
    },
    components: {
      type: "object",
      properties: {
        schemas: { type: "object", propertyNames: { pattern: "^[a-zA-Z0-9.\\-_]+$" } },
        securitySchemes: { type: "object" },
      },
      additionalProperties: false,
    },
  },
  patternProperties: X,
  additionalProperties: false,
  $defs: {
    operation: {
      type: "object",
      required: ["responses"],
      properties: {
        operationId: { type: "string" },
        summary: { type: "string" },
        description: { type: "string" },
        tags: { type: "array", items: { type: "string" } },
        parameters: { type: "array", items: { $ref: "#/$defs/parameter" } },
        requestBody: {
          type: "object",
          required: ["content"],
          properties: { required: { type: "boolean" }, description: { type: "string" }, content: MEDIA_MAP },
          additionalProperties: false,
        },
        responses: {
          type: "object",
          minProperties: 1,
          propertyNames: { pattern: "^([1-5](\\d\\d|XX)|default)$" },
          additionalProperties: {
            type: "object",
            required: ["description"],
            properties: {
              description: { type: "string" },
              content: MEDIA_MAP,
              headers: {
                type: "object",
                additionalProperties: {
                  type: "object",
                  required: ["schema"],
                  properties: { schema: { type: "object" }, description: { type: "string" } },
                  additionalProperties: false,
                },
              },
            },
            additionalProperties: false,
          },
        },
        security: { type: "array" },
        deprecated: { type: "boolean" },
      },
      patternProperties: X,
      additionalProperties: false,
    },
    parameter: {
      type: "object",
      required: ["name", "in", "schema"],
      properties: {
        name: { type: "string", minLength: 1 },
        in: { enum: ["query", "header", "path", "cookie"] },
        required: { type: "boolean" },
        description: { type: "string" },
        schema: { type: "object" },
        example: {},
        deprecated: { type: "boolean" },
      },
      if: { properties: { in: { const: "path" } } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema keyword
      then: { required: ["required"], properties: { required: { const: true } } },
      additionalProperties: false,
    },
  },
};

describe("GET /openapi.json and /docs", () => {
  let chain: DemoChain;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let app: FastifyInstance;
  let document: Document;
  let txHash: string;

  beforeAll(async () => {
    chain = await setupDemoChain();
    const generated = await generateTransactions({
      rpcUrl: chain.anvil.url,
      deployment: chain.deployment,
      count: 30,
      perBlock: 6,
    });
    txHash = generated.txHashes.at(-1)!;
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config: chain.config, database: db.database });
    await pipeline.catchUp();
    const config = { ...chain.config, api: { ...chain.config.api, rateLimitPerMinute: 100_000 } };
    app = await buildApp(
      { ...pipeline.common, config },
      { database: db.database, chain: pipeline.chain, indexerStatus: pipeline.indexer.status },
    );
    const response = await app.inject({ method: "GET", url: "/openapi.json" });
    expect(response.statusCode).toBe(200);
    document = response.json();
  });

  afterAll(async () => {
    await app?.close();
    await pipeline?.close();
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  test("default: an OpenAPI 3.1 document with info, servers, tags and public security", () => {
    expect(document.openapi).toBe("3.1.0");
    expect(document.info).toMatchObject({
      title: "protoscan API",
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    expect(document.info.license).toEqual({ name: "MIT", identifier: "MIT" });
    expect(document.servers).toEqual([{ url: "/", description: "this protoscan instance" }]);
    expect(document.security).toEqual([]);
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(OAS_31_SUBSET);
    expect(validate(document), JSON.stringify(validate.errors, null, 1)).toBe(true);
  });

  test("default: SPEC §4 read endpoints are all documented", () => {
    const documented = operationsOf(document).map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    for (const expected of ["GET /api/tx/{hash}", "GET /api/transactions/recent", "GET /api/stats"]) {
      expect(documented).toContain(expected);
    }
    // hidden: the document itself, the UI and its assets
    expect(documented.filter((o) => o.includes("/docs") || o.includes("openapi"))).toEqual([]);
  });

  test("default: every operation has a unique URL-safe operationId, a summary, tags, 2xx and 4xx", () => {
    const ids = new Set<string>();
    for (const { path, method, operation } of operationsOf(document)) {
      const where = `${method} ${path}`;
      expect(operation.operationId, where).toMatch(/^[A-Za-z0-9_.~-]+$/);
      expect(ids.has(operation.operationId!), `${where}: duplicate operationId`).toBe(false);
      ids.add(operation.operationId!);
      expect(operation.summary?.trim().length, where).toBeGreaterThan(0);
      expect(operation.tags?.length, where).toBeGreaterThan(0);
      const statuses = Object.keys(operation.responses);
      expect(
        statuses.some((s) => s.startsWith("2")),
        `${where}: 2xx`,
      ).toBe(true);
      expect(
        statuses.some((s) => s.startsWith("4")),
        `${where}: 4xx`,
      ).toBe(true);
    }
    expect(ids.size).toBeGreaterThan(3);
  });

  test("default: every 4xx is problem+json with the Problem schema, whose code lists the registry", () => {
    for (const { path, method, operation } of operationsOf(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!status.startsWith("4")) continue;
        expect(Object.keys(response.content ?? {}), `${method} ${path} ${status}`).toEqual([
          "application/problem+json",
        ]);
        expect(response.content!["application/problem+json"]!.schema).toEqual({
          $ref: "#/components/schemas/Problem",
        });
      }
      // Etherscan's API answers its rate limit with HTTP 200 in its envelope (SPEC §11).
      const etherscan = ["/api", "/v2/api"].includes(path);
      if (
        !["/healthz", "/readyz", "/metrics"].includes(path) &&
        !path.startsWith("/api/webhooks/") &&
        !etherscan
      ) {
        const limited = operation.responses["429"];
        expect(limited?.headers, `${method} ${path}: 429 with Retry-After`).toHaveProperty("Retry-After");
      }
    }
    const problem = document.components.schemas.Problem as { properties: { code: { enum: string[] } } };
    expect(problem.properties.code.enum).toEqual(ERROR_CODES);
  });

  test("default: parameters (Redocly path-parameters-defined, operation-parameters-unique, examples)", () => {
    for (const { path, method, operation } of operationsOf(document)) {
      const where = `${method} ${path}`;
      const parameters = operation.parameters ?? [];
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const inPath = parameters.filter((p) => p.in === "path").map((p) => p.name);
      expect(inPath.sort(), where).toEqual(templated.sort());
      const keys = parameters.map((p) => `${p.in}:${p.name}`);
      expect(new Set(keys).size, `${where}: unique parameters`).toBe(keys.length);
      for (const parameter of parameters) {
        expect(parameter.schema, `${where} ${parameter.name}: schema`).toBeTypeOf("object");
        if (parameter.in === "path" || parameter.required) {
          expect(parameter.example, `${where} ${parameter.name}: example`).toBeDefined();
        }
        if (method === "get" && parameter.schema.type === "string") {
          // SPEC §4 "parameters with constraints": a read endpoint's string parameter must be bounded
          const bounded = ["pattern", "maxLength", "enum", "const"].some((k) => k in parameter.schema);
          expect(bounded, `${where} ${parameter.name}: constrained`).toBe(true);
        }
      }
    }
  });

  test("default: paths (no trailing slash, no query, no identical or ambiguous templates)", () => {
    const paths = Object.keys(document.paths);
    for (const path of paths) {
      expect(path === "/" || !path.endsWith("/"), path).toBe(true);
      expect(path).not.toContain("?");
    }
    const shape = (p: string) => p.replace(/\{[^}]+\}/g, "{}");
    expect(new Set(paths.map(shape)).size).toBe(paths.length);
    // ambiguous: two templates that match one concrete path, e.g. /a/{x}/b and /a/c/{y}
    for (const a of paths) {
      for (const b of paths) {
        if (a >= b) continue;
        const sa = a.split("/");
        const sb = b.split("/");
        if (sa.length !== sb.length) continue;
        const overlap = sa.every((s, i) => s === sb[i] || s.startsWith("{") || sb[i]!.startsWith("{"));
        const aWins = sa.every((s, i) => s === sb[i] || (!s.startsWith("{") && sb[i]!.startsWith("{")));
        const bWins = sb.every((s, i) => s === sa[i] || (!s.startsWith("{") && sa[i]!.startsWith("{")));
        expect(overlap && !aWins && !bWins, `${a} vs ${b} are ambiguous`).toBe(false);
      }
    }
  });

  test("default: components (no unresolved refs, no unused schemas, names and tags described)", () => {
    const refs = collect(document, "$ref") as string[];
    const schemas = document.components.schemas;
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\/[A-Za-z0-9._-]+$/);
      expect(schemas[ref.split("/").at(-1)!], `unresolved ${ref}`).toBeDefined();
    }
    const used = new Set(refs.map((r) => r.split("/").at(-1)));
    for (const name of Object.keys(schemas)) expect(used.has(name), `unused component ${name}`).toBe(true);
    expect(Object.keys(schemas).filter((name) => name.startsWith("def-"))).toEqual([]);
    for (const name of ["Problem", "Transaction"]) expect(schemas).toHaveProperty(name);
    expect(collect(document, "$id")).toEqual([]);

    const declared = new Map((document.tags ?? []).map((t) => [t.name, t.description]));
    for (const { operation } of operationsOf(document)) {
      for (const tag of operation.tags ?? []) expect(declared.get(tag), `tag ${tag}`).toMatch(/\S/);
    }
    for (const [name, scheme] of Object.entries(document.components.securitySchemes ?? {})) {
      expect(scheme, name).toMatchObject({ type: "apiKey", in: "header" });
    }
    for (const { operation } of operationsOf(document)) {
      for (const requirement of (operation.security ?? []) as Json[]) {
        for (const name of Object.keys(requirement))
          expect(document.components.securitySchemes).toHaveProperty(name);
      }
    }
  });

  test("default: schemas compile as JSON Schema 2020-12 and their examples are valid", () => {
    const validator = schemaValidator(document);
    const schemas: [string, Json][] = Object.entries(document.components.schemas).map(([n, s]) => [n, s]);
    for (const { path, method, operation } of operationsOf(document)) {
      for (const parameter of operation.parameters ?? []) {
        schemas.push([`${method} ${path} ${parameter.name}`, parameter.schema]);
        if (parameter.example !== undefined) {
          const validate = validator(parameter.schema);
          expect(validate(parameter.example), `${path} ${parameter.name} example`).toBe(true);
        }
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const media of Object.values(response.content ?? {}))
          schemas.push([`${path} ${status}`, media.schema]);
      }
    }
    for (const [where, schema] of schemas) {
      const validate = validator(schema);
      // every `examples` inside the schema, at any depth, must satisfy the schema it sits in
      const check = (node: unknown, at: string) => {
        if (Array.isArray(node)) {
          for (const [i, item] of node.entries()) check(item, `${at}/${i}`);
        }
        if (typeof node !== "object" || node === null || Array.isArray(node)) return;
        const obj = node as Json;
        if (Array.isArray(obj.examples) && !("$ref" in obj)) {
          const own = validator(obj);
          for (const example of obj.examples) expect(own(example), `${where}${at} example`).toBe(true);
        }
        for (const [k, v] of Object.entries(obj)) if (k !== "examples") check(v, `${at}/${k}`);
      };
      check(schema, "");
      expect(validate).toBeTypeOf("function");
    }
    // no-required-schema-properties-undefined and no-enum-type-mismatch
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) {
        for (const item of node) walk(item);
        return;
      }
      if (typeof node !== "object" || node === null) return;
      const obj = node as Json;
      if (obj.type === "object" && Array.isArray(obj.required) && typeof obj.properties === "object") {
        for (const name of obj.required) expect(obj.properties as Json).toHaveProperty(String(name));
      }
      if (Array.isArray(obj.enum) && typeof obj.type === "string") {
        const type = obj.type === "integer" ? "number" : obj.type;
        for (const value of obj.enum) expect(typeof value).toBe(type);
      }
      Object.values(obj).forEach(walk);
    };
    walk(document);
  });

  test("default: /docs serves Swagger UI from local assets only, under a self-only CSP", async () => {
    const page = await app.inject({ method: "GET", url: "/docs" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toContain("text/html");
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/https?:/);
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) {
      expect(asset, "no absolute or protocol-relative URL").not.toMatch(/^([a-z]+:)?\/\//i);
      const url = new URL(asset, "http://local/docs").pathname;
      const response = await app.inject({ method: "GET", url });
      expect(response.statusCode, url).toBe(200);
      expect(response.body, `${url} loads nothing remote`).not.toMatch(/(src|href)=["']https?:\/\//);
    }
    const initializer = await app.inject({ method: "GET", url: "/docs/static/swagger-initializer.js" });
    expect(initializer.body).toContain("resolveUrl('./json')");
    // no remote URL in any string literal (a comment links to Stack Overflow)
    expect(initializer.body).not.toMatch(/["'`]https?:\/\//);
    const json = await app.inject({ method: "GET", url: "/docs/json" });
    expect(json.json()).toEqual(document);
  });

  test("default: /docs/errors is the error documentation the problem types point at", async () => {
    const response = await app.inject({ method: "GET", url: "/docs/errors" });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/markdown; charset=utf-8");
    for (const code of ERROR_CODES) expect(response.body).toContain(`<a id="${code}"></a>`);
  });

  test("default: real responses of every GET operation conform to the document", async () => {
    const validator = schemaValidator(document);
    const token = chain.config.tokens[0]!.address;
    const values: Record<string, string> = {
      hash: txHash,
      txHash,
      address: token,
      protocolId: chain.config.protocols[0]!.id,
      provider: "alchemy",
      q: "DEM",
    };
    let checked = 0;
    const check = async (method: string, operation: Operation, url: string) => {
      const response = await app.inject({ method: method.toUpperCase() as "GET", url });
      const status = String(response.statusCode);
      const declared = operation.responses[status] ?? operation.responses[`${status[0]}XX`];
      expect(declared, `${url}: ${status} is not documented`).toBeDefined();
      const contentType = String(response.headers["content-type"]).split(";")[0]!;
      const media = declared!.content?.[contentType];
      expect(media, `${url}: ${status} ${contentType} is not documented`).toBeDefined();
      const validate = validator(media!.schema);
      // A CSV export (SPEC §10.4) is a string that parses as RFC 4180; everything else is JSON.
      const body = contentType === "text/csv" ? response.body : response.json();
      if (contentType === "text/csv") expect(parseCsv(response.body).header.length, url).toBeGreaterThan(1);
      expect(validate(body), `${url}: ${JSON.stringify(validate.errors)}`).toBe(true);
      checked++;
      return response;
    };
    for (const { path, method, operation } of operationsOf(document)) {
      if (method !== "get") continue;
      const parameters = operation.parameters ?? [];
      const fill = (value: (p: Parameter) => string) => {
        let url = path;
        const query = new URLSearchParams();
        for (const p of parameters) {
          if (p.in === "path") url = url.replace(`{${p.name}}`, encodeURIComponent(value(p)));
          else if (p.in === "query" && p.required) query.set(p.name, value(p));
        }
        return query.size > 0 ? `${url}?${query}` : url;
      };
      const url = fill((p) => values[p.name] ?? String(p.example));
      const first = await check(method, operation, url);
      expect(first.statusCode, `${url} answers 2xx with demo values`).toBeLessThan(300);
      if (parameters.some((p) => p.name === "limit")) {
        const page = await check(method, operation, `${url}${url.includes("?") ? "&" : "?"}limit=2`);
        const next = (page.json() as { nextCursor?: string | null }).nextCursor;
        if (typeof next === "string" && parameters.some((p) => p.name === "cursor")) {
          await check(method, operation, `${url}${url.includes("?") ? "&" : "?"}limit=2&cursor=${next}`);
        }
        await check(method, operation, `${url}${url.includes("?") ? "&" : "?"}limit=0`);
        // Ajv coerces "Infinity" to a number and skips `maximum` for it; it reached SQL once (a 500)
        const infinite = await check(
          method,
          operation,
          `${url}${url.includes("?") ? "&" : "?"}limit=Infinity`,
        );
        expect(infinite.statusCode, `${url} limit=Infinity`).toBe(400);
      }
      if (parameters.some((p) => p.in === "path"))
        await check(
          method,
          operation,
          fill(() => "0x12"),
        );
    }
    // a stored transaction and the not-found problem, explicitly
    await check("get", document.paths["/api/tx/{hash}"]!.get!, `/api/tx/${txHash}`);
    const missing = await check(
      "get",
      document.paths["/api/tx/{hash}"]!.get!,
      `/api/tx/0x${"00".repeat(32)}`,
    );
    expect(missing.json()).toMatchObject({ code: "TX_NOT_FOUND" });
    expect(checked).toBeGreaterThan(10);
  });
});
