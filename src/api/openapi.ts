import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import type { FastifySchema } from "fastify";
import packageJson from "../../package.json" with { type: "json" };
import { ERROR_CODES, ERROR_REGISTRY, type ErrorCode } from "./errorRegistry.ts";
import { ETHERSCAN_PATHS } from "./etherscanEnvelope.ts";
import { isRateLimitExempt } from "./plugins/rateLimit.ts";
import { ProblemSchema } from "./schemas/common.ts";

type Json = Record<string, unknown>;

const PROBLEM_JSON = "application/problem+json";
const SCHEMAS = "#/components/schemas/";
const RESPONSE_DESCRIPTION = "x-response-description";

/** Tags with their descriptions; a route using a tag not listed here still gets one (`<tag> endpoints`). */
const TAGS: Record<string, string> = {
  tokens: "Tracked ERC-20 tokens: metadata, prices, holders and transfer events",
  transactions: "Stored transactions with their decoded call, events and token transfers",
  protocols: "Configured protocols: statistics and transactions",
  addresses: "Any address: native balance, token balances and transactions",
  search: "One search box for hashes, addresses, blocks, tokens and protocols",
  stats: "Global statistics, overview and indexer progress",
  ingest: "Site-triggered ingestion and provider webhooks",
  operations: "Liveness and readiness probes, metrics",
  etherscan: "Etherscan's API (modules and actions) over what protoscan indexes; every answer HTTP 200",
};

/**
 * @fastify/swagger options producing the OpenAPI 3.1 document of SPEC §4 from the route schemas:
 * - every schema with an `$id` (Transaction, Token, Problem…) becomes `components.schemas.<$id>` and is
 *   referenced, so each resource is described once; two different schemas with one `$id` are an error;
 * - every 4xx/5xx response is `application/problem+json` and lists the codes it may carry; rate-limited
 *   operations document 429 with `Retry-After`, operations with a body 413 and 415;
 * - a query parameter with a default is optional (Fastify fills it in), and its default is its example.
 * Route schemas are cloned, never mutated: they still validate requests and serialize responses.
 */
export function openApiOptions(): FastifyDynamicSwaggerOptions {
  const named = new Map<string, Json>();
  const name = (id: string, schema: Json) => {
    const known = named.get(id);
    if (known && JSON.stringify(known) !== JSON.stringify(schema)) {
      throw new Error(`OpenAPI: two different schemas have the $id "${id}"`);
    }
    named.set(id, schema);
  };
  name("Problem", hoist(plain(ProblemSchema), name, true));

  return {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "protoscan API",
        version: packageJson.version,
        description:
          "Explorer API over the transactions, token transfers and balances protoscan indexes for the configured " +
          "protocols. Conventions (paging, cursors, errors, rate limits): docs/api.md. Error codes: /docs/errors.",
        license: { name: "MIT", identifier: "MIT" },
      },
      servers: [{ url: "/", description: "this protoscan instance" }],
      // Reads are public; POST /api/track-tx may require an API key (api.trackTxApiKeys), see its `security`.
      security: [],
      components: {
        securitySchemes: {
          apiKey: {
            type: "apiKey",
            in: "header",
            name: "X-API-Key",
            description: "one of api.trackTxApiKeys",
          },
        },
      },
    },
    transform: ({ schema, url }) => {
      if (!schema || (schema as Json).hide === true) return { schema, url };
      return { schema: documentRoute(plain(schema), { url, body: "body" in schema, name }), url };
    },
    transformObject: (documentObject) => {
      const source =
        "openapiObject" in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
      const document = source as Json & { components?: Json; paths?: Record<string, Json> };
      const components = (document.components ?? {}) as Json;
      const schemas = { ...((components.schemas as Json | undefined) ?? {}) };
      for (const id of [...named.keys()].sort()) schemas[id] = named.get(id);
      const problem = schemas.Problem as { properties?: Record<string, Json> } | undefined;
      if (problem?.properties?.code) problem.properties.code.enum = [...ERROR_CODES];
      document.components = { ...components, schemas };
      document.tags = usedTags(document.paths ?? {}).map((tag) => ({
        name: tag,
        description: TAGS[tag] ?? `${tag} endpoints`,
      }));
      return document as typeof source;
    },
  };
}

/** The OpenAPI view of one route schema (already a plain clone). */
function documentRoute(
  schema: Json,
  options: { url: string; body: boolean; name: (id: string, schema: Json) => void },
): FastifySchema {
  for (const part of ["querystring", "params", "headers"]) {
    if (isObject(schema[part])) optionalDefaults(schema[part]);
  }
  if (isObject(schema.body)) schema.body = hoist(schema.body, options.name);

  // Without a response schema the body is undocumented: `type: "null"` makes a 200 without content.
  const responses: Json = isObject(schema.response)
    ? schema.response
    : { 200: { type: "null", description: "OK" } };
  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response)) continue;
    if (isObject(response.content)) {
      for (const media of Object.values(response.content)) {
        if (isObject(media) && isObject(media.schema)) media.schema = hoist(media.schema, options.name);
      }
      continue;
    }
    const hoisted = hoist(response, options.name);
    // An error answered with another schema (the readiness report of /readyz) keeps its JSON media type.
    if (/^[45]/.test(status) && hoisted.$ref === `${SCHEMAS}Problem`) {
      responses[status] = problemResponse(status, hoisted);
    } else if (typeof hoisted.description === "string") {
      responses[status] = hoisted;
    } else {
      // @fastify/swagger takes a response's description from `description` (dropped next to a `$ref`) or
      // from this key, which it keeps out of the schema.
      responses[status] = { ...hoisted, [hoisted.$ref ? "description" : RESPONSE_DESCRIPTION]: "OK" };
    }
  }

  const add = (status: string, detail: string, extra: Json = {}) => {
    responses[status] ??= { ...problemResponse(status), description: detail, ...extra };
  };
  // Etherscan's API answers its errors and its rate limit with HTTP 200 in its own envelope: only a body over
  // 1 MiB is refused at the HTTP level.
  if (ETHERSCAN_PATHS.includes(options.url)) {
    if (options.body) add("413", "Request body larger than 1 MiB (PAYLOAD_TOO_LARGE)");
  } else if (options.body) {
    add("400", problemResponse("400").description as string);
    add("413", "Request body larger than 1 MiB (PAYLOAD_TOO_LARGE)");
    add("415", "Request body is not application/json (UNSUPPORTED_MEDIA_TYPE)");
  }
  if (!isRateLimitExempt(options.url) && !ETHERSCAN_PATHS.includes(options.url)) {
    add("429", "Too many requests from this address (RATE_LIMITED)", {
      headers: {
        "Retry-After": {
          type: "integer",
          minimum: 1,
          description: "seconds until a request is accepted again",
        },
      },
    });
  }
  if (!Object.keys(responses).some((status) => status.startsWith("4"))) {
    add("4XX", "Malformed request, e.g. headers too large (BAD_REQUEST, HEADERS_TOO_LARGE)");
  }
  schema.response = responses;
  return schema as FastifySchema;
}

/** A problem+json response for `status`, describing the registry codes it may carry. */
function problemResponse(status: string, schema: Json = { $ref: `${SCHEMAS}Problem` }): Json {
  const codes = ERROR_CODES.filter((code: ErrorCode) => String(ERROR_REGISTRY[code].status) === status);
  const { description: _ignored, ...rest } = schema;
  return {
    description: `Problem details (RFC 9457)${codes.length > 0 ? `; code ${codes.join(" | ")}` : ""}`,
    content: { [PROBLEM_JSON]: { schema: rest } },
  };
}

/**
 * Replace every subschema carrying an `$id` by a reference to `components.schemas.<$id>`, registering the
 * subschema (itself hoisted, without its `$id`) through `name`. `keepRoot` hoists inside the root only.
 */
function hoist(schema: Json, name: (id: string, schema: Json) => void, keepRoot = false): Json {
  const walk = (node: unknown, root: boolean): unknown => {
    if (Array.isArray(node)) return node.map((item) => walk(item, false));
    if (!isObject(node)) return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) {
      // `properties` maps names to schemas; an `$id` key there would be a property name, not an id.
      out[key] = key === "properties" && isObject(value) ? walkMap(value) : walk(value, false);
    }
    if (typeof out.$id !== "string" || (root && keepRoot)) return out;
    const { $id: id, ...named } = out as Json & { $id: string };
    name(id, named);
    const description = typeof named.description === "string" ? { description: named.description } : {};
    return { $ref: `${SCHEMAS}${id}`, ...description };
  };
  const walkMap = (map: Json): Json =>
    Object.fromEntries(Object.entries(map).map(([key, value]) => [key, walk(value, false)]));
  const out = walk(schema, true) as Json;
  if (keepRoot) delete out.$id;
  return out;
}

/** Fastify applies defaults, so a parameter with one is optional for the client; its default is its example. */
function optionalDefaults(schema: Json): void {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const withDefault = Object.keys(properties).filter((key) => {
    const property = properties[key];
    return isObject(property) && property.default !== undefined;
  });
  if (Array.isArray(schema.required)) {
    schema.required = schema.required.filter((key) => !withDefault.includes(String(key)));
    if ((schema.required as unknown[]).length === 0) delete schema.required;
  }
  for (const key of withDefault) {
    const property = properties[key] as Json;
    property.examples ??= [property.default];
  }
}

function usedTags(paths: Record<string, Json>): string[] {
  const tags = new Set<string>();
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item ?? {})) {
      if (isObject(operation) && Array.isArray(operation.tags))
        for (const tag of operation.tags) tags.add(String(tag));
    }
  }
  return [...tags].sort();
}

/** A JSON-only deep copy: TypeBox's non-enumerable markers and Fastify's additions are left behind. */
function plain<T>(value: T): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
