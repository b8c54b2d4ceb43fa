import fc from "fast-check";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { ERROR_REGISTRY, isErrorCode } from "../../src/api/errorRegistry.ts";
import { compileRouteSchemas } from "../../src/api/lazySchemaCompilers.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

/**
 * Property: whatever path, parameters, query string, headers and body a client sends to any route of the
 * OpenAPI document (so routes added later are covered without touching this file), the server never
 * answers 5xx, and every 4xx is `application/problem+json` with a registry code, matching status, type
 * and title, and nothing internal (stack, SQL, node URL) in it. SPEC §4 "No input makes the server answer
 * 5xx except a real upstream or database outage".
 */

type Parameter = { name: string; in: string; required?: boolean; example?: unknown };
type Operation = { method: string; path: string; parameters: Parameter[]; hasBody: boolean };
type Request = {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload: string | Buffer | undefined;
};

const RUNS = 400;
const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"];

/** Strings that have broken parsers before: encodings, numbers at the edges, prototype keys, injections. */
const NASTY = [
  "",
  ".",
  "..",
  "%",
  "%00",
  "%zz",
  "%2F",
  "%C0%AF",
  "%E0%A4%A",
  "null",
  "undefined",
  "true",
  "[]",
  "{}",
  "-1",
  "0",
  "-0",
  "1e309",
  "9007199254740993",
  "1".repeat(80),
  "0x",
  "0X",
  "NaN",
  "Infinity",
  "__proto__",
  "constructor",
  "prototype",
  "hasOwnProperty",
  "' OR 1=1 --",
  "'; DROP TABLE transactions; --",
  "<script>alert(1)</script>",
  "$\u007bjndi:ldap://x}",
  "\u0000",
  "\u202e",
  "😀",
  "a".repeat(300),
];

/** Percent-encoding of any string: lone surrogates (which `encodeURIComponent` rejects) become U+FFFD. */
function encode(value: string): string {
  return encodeURIComponent(Buffer.from(value, "utf8").toString("utf8"));
}

/** Characters left as they are in a request target (a stray `%` included); everything else is encoded. */
function rawPath(value: string): string {
  return Buffer.from(value, "utf8")
    .toString("utf8")
    .replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@%/]/gu, (c) => encodeURIComponent(c));
}

function printable(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, "");
}

describe("property: malformed requests to every route", () => {
  let chain: DemoChain;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let app: FastifyInstance;
  let operations: Operation[];
  let valid: Record<string, string[]>;

  beforeAll(async () => {
    chain = await setupDemoChain();
    const generated = await generateTransactions({
      rpcUrl: chain.anvil.url,
      deployment: chain.deployment,
      count: 12,
      perBlock: 4,
    });
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config: chain.config, database: db.database });
    await pipeline.catchUp();
    const config = { ...chain.config, api: { ...chain.config.api, rateLimitPerMinute: 1_000_000 } };
    app = await buildApp(
      { ...pipeline.common, config },
      { database: db.database, chain: pipeline.chain, indexerStatus: pipeline.indexer.status },
    );
    const document = (await app.inject({ method: "GET", url: "/openapi.json" })).json() as {
      paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: unknown }>>;
    };
    operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        parameters: operation.parameters ?? [],
        hasBody: operation.requestBody !== undefined,
      })),
    );
    const token = chain.config.tokens[0]!.address;
    const hash = generated.txHashes[0]!;
    valid = {
      address: [token, token.toUpperCase().replace("0X", "0x"), chain.deployment.users[0]!],
      hash: [hash, hash.toUpperCase().replace("0X", "0x")],
      txHash: [hash],
      protocolId: chain.config.protocols.map((p) => p.id),
      protocol: chain.config.protocols.map((p) => p.id),
      provider: ["alchemy", "quicknode"],
      q: ["DEM", hash, token, "1", "demo"],
      limit: ["1", "25", "100"],
      offset: ["0", "10000"],
      fromBlock: ["0", "1"],
      toBlock: ["1", "99999999"],
    };
  });

  afterAll(async () => {
    await app?.close();
    await pipeline?.close();
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  /** A value for a parameter: a valid one, an example, or something nasty, encoded or raw. */
  const valueFor = (name: string, example: unknown) =>
    fc.tuple(
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...(valid[name] ?? [String(example ?? "x")])) },
        { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
        { weight: 2, arbitrary: fc.string({ maxLength: 70 }) },
        { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
        { weight: 2, arbitrary: fc.stringMatching(/^0[xX][0-9a-fA-FgG]{0,70}$/) },
        { weight: 2, arbitrary: fc.integer().map(String) },
        { weight: 1, arbitrary: fc.double().map(String) },
      ),
      fc.boolean(),
    );

  const headersArb = fc.record(
    {
      "content-type": fc.oneof(
        fc.constantFrom(
          "application/json",
          "application/json; charset=utf-8",
          "application/json; charset=utf-16",
          "text/plain",
          "application/xml",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/problem+json",
          "application/octet-stream",
          "",
          "json",
          "*/*",
        ),
        fc.string({ maxLength: 40 }).map(printable),
      ),
      accept: fc.constantFrom("application/json", "text/html", "*/*", "application/xml", "garbage"),
      origin: fc.constantFrom("https://app.example.org", "null", "http://localhost:3000", "x"),
      "x-request-id": fc.string({ maxLength: 64 }).map(printable),
      "x-api-key": fc.string({ maxLength: 64 }).map(printable),
      "x-alchemy-signature": fc.stringMatching(/^[0-9a-f]{0,64}$/),
      "x-qn-signature": fc.stringMatching(/^[0-9a-f]{0,64}$/),
      "x-qn-nonce": fc.string({ maxLength: 40 }).map(printable),
      "x-qn-timestamp": fc.oneof(
        fc.integer().map(String),
        fc.constant(String(Math.floor(Date.now() / 1000))),
      ),
      "access-control-request-method": fc.constantFrom(...METHODS),
      "accept-encoding": fc.constantFrom("gzip", "br", "identity", "*"),
    },
    { requiredKeys: [] },
  );

  const bodyArb = (hash: string) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      { weight: 3, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
      {
        weight: 3,
        arbitrary: fc
          .record(
            {
              txHash: fc.oneof(fc.constant(hash), fc.stringMatching(/^0x[0-9a-f]{64}$/), fc.string()),
              protocol: fc.oneof(fc.constantFrom(...(valid.protocol ?? [])), fc.string({ maxLength: 80 })),
              type: fc.constantFrom("ADDRESS_ACTIVITY", "GRAPHQL", "x"),
              id: fc.string(),
              event: fc.jsonValue(),
              data: fc.jsonValue(),
            },
            { requiredKeys: [] },
          )
          .map((v) => JSON.stringify(v)),
      },
      { weight: 2, arbitrary: fc.string({ maxLength: 200 }) },
      {
        weight: 1,
        arbitrary: fc.constantFrom("{", '{"a":', "[", '"', "nul", '{"__proto__":{"x":1}}', "\u0000"),
      },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
      { weight: 1, arbitrary: fc.constant(`"${"x".repeat(1024 * 1024 + 10)}"`) },
    );

  function requestFor(operation: Operation): fc.Arbitrary<Request> {
    const pathParams = operation.parameters.filter((p) => p.in === "path");
    const queryParams = operation.parameters.filter((p) => p.in === "query");
    const hash = valid.hash![0]!;
    return fc
      .record({
        method: fc.oneof(
          { weight: 4, arbitrary: fc.constant(operation.method) },
          fc.constantFrom(...METHODS),
        ),
        path: fc.tuple(...pathParams.map((p) => valueFor(p.name, p.example))),
        query: fc.array(
          fc.tuple(
            fc.oneof(
              {
                weight: 4,
                arbitrary: fc.constantFrom(...(queryParams.length ? queryParams.map((p) => p.name) : ["x"])),
              },
              {
                weight: 1,
                arbitrary: fc.constantFrom("limit[]", "__proto__", "constructor", "a.b", "", "%zz"),
              },
              { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
            ),
            valueFor("query", "1"),
          ),
          { maxLength: 5 },
        ),
        suffix: fc.constantFrom("", "", "", "/", "//", "/extra", "?", "?&", "/%2e%2e/healthz"),
        headers: headersArb,
        payload: bodyArb(hash),
      })
      .map(({ method, path, query, suffix, headers, payload }) => {
        let url = operation.path;
        pathParams.forEach((p, i) => {
          const [value, raw] = path[i]!;
          url = url.replace(`{${p.name}}`, raw ? rawPath(value) : encode(value));
        });
        const search = query
          .map(([key, [value, raw]]) =>
            raw
              ? `${rawPath(key)}=${rawPath(value)}`
              : `${encodeURIComponent(key)}=${encodeURIComponent(value)}`,
          )
          .join("&");
        url = `${url}${suffix}`;
        if (search) url += `${url.includes("?") ? "&" : "?"}${search}`;
        return { method, url, headers, payload };
      });
  }

  test("every route's request and response schemas compile (they are compiled on first use otherwise)", () => {
    // /openapi.json was served above; every other route has compiled nothing yet.
    expect(compileRouteSchemas(app)).toBeGreaterThan(100);
    expect(compileRouteSchemas(app)).toBe(0);
  });

  test(`property: ${RUNS} malformed requests across every documented route never get a 5xx or a non-problem 4xx`, async () => {
    expect(operations.length).toBeGreaterThan(3);
    const seen = new Map<number, number>();
    const arbitrary = fc.oneof(
      ...operations.map((operation) => requestFor(operation)),
      // paths no route has, under the API prefix and elsewhere
      fc
        .tuple(
          fc.constantFrom("/api/", "/", "/docs/", "/api/tokens/"),
          fc.string({ maxLength: 40 }),
          headersArb,
        )
        .map(([prefix, rest, headers]) => ({
          method: "GET",
          url: prefix + rawPath(rest),
          headers,
          payload: undefined,
        })),
    );
    await fc.assert(
      fc.asyncProperty(arbitrary, async (request) => {
        const response = await app.inject({
          method: request.method as "GET",
          url: request.url,
          headers: request.headers,
          ...(request.payload !== undefined ? { payload: request.payload } : {}),
        });
        seen.set(response.statusCode, (seen.get(response.statusCode) ?? 0) + 1);
        const where = `${request.method} ${request.url} -> ${response.statusCode} ${response.body.slice(0, 300)}`;
        expect(response.statusCode, where).toBeLessThan(500);
        if (response.statusCode < 400) return;
        expect(response.headers["content-type"], where).toBe("application/problem+json; charset=utf-8");
        if (request.method === "HEAD") return;
        const body = response.json() as Record<string, unknown>;
        expect(Object.keys(body).sort(), where).toEqual(["code", "detail", "status", "title", "type"]);
        expect(isErrorCode(body.code), where).toBe(true);
        if (!isErrorCode(body.code)) return;
        expect(body, where).toMatchObject({
          type: `/docs/errors#${body.code}`,
          title: ERROR_REGISTRY[body.code].title,
          status: response.statusCode,
        });
        expect(ERROR_REGISTRY[body.code].status, where).toBe(response.statusCode);
        const detail = String(body.detail);
        expect(detail, where).not.toMatch(
          /\n\s+at |node_modules|postgres(ql)?:\/\/|SELECT |127\.0\.0\.1:\d+/,
        );
        expect(detail).not.toContain(chain.anvil.url);
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    // the generator reached both sides: accepted requests and every family of refusals
    expect([...seen.keys()].some((status) => status < 300)).toBe(true);
    for (const status of [400, 404, 405, 415])
      expect(seen.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0);
  });
});
