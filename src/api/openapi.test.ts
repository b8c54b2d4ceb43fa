import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import Type from "typebox";
import { describe, expect, test } from "vitest";
import { openApiOptions } from "./openapi.ts";
import { ProblemSchema } from "./schemas/common.ts";

const Thing = Type.Object({ id: Type.String(), tags: Type.Array(Type.String()) }, { $id: "Thing" });

async function documentOf(register: (app: FastifyInstance) => void) {
  const app = Fastify();
  await app.register(swagger, openApiOptions());
  register(app);
  await app.ready();
  const document: unknown = app.swagger();
  await app.close();
  return document;
}

/** `value[k1][k2]…`, or undefined as soon as a step is missing. */
function at(value: unknown, ...keys: string[]): unknown {
  let node = value;
  for (const key of keys) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

const keys = (value: unknown) => Object.keys(value as object);

describe("openApiOptions", () => {
  test("default: schemas with an $id become components and are referenced, the route schema is untouched", async () => {
    const schema = {
      operationId: "getThing",
      summary: "a thing",
      tags: ["things"],
      params: Type.Object({ id: Type.String({ maxLength: 10, examples: ["a"] }) }),
      response: {
        200: Thing,
        201: Type.Object({ things: Type.Array(Thing), next: Type.Union([Type.String(), Type.Null()]) }),
        404: ProblemSchema,
      },
    };
    const before = JSON.stringify(schema);
    const document = await documentOf((app) => app.get("/things/:id", { schema }, async () => ({})));
    expect(JSON.stringify(schema)).toBe(before);
    const operation = at(document, "paths", "/things/{id}", "get");
    expect(at(operation, "responses", "200")).toEqual({
      description: "OK",
      content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } },
    });
    expect(
      at(operation, "responses", "201", "content", "application/json", "schema", "properties", "things"),
    ).toEqual({
      type: "array",
      items: { $ref: "#/components/schemas/Thing" },
    });
    expect(at(operation, "responses", "404")).toEqual({
      description:
        "Problem details (RFC 9457); code NOT_FOUND | TOKEN_NOT_TRACKED | PROTOCOL_NOT_FOUND | TX_NOT_FOUND",
      content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
    });
    expect(at(document, "components", "schemas", "Thing")).toEqual({
      type: "object",
      required: ["id", "tags"],
      properties: { id: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
    });
    expect(at(document, "components", "schemas", "Problem", "properties", "code", "enum")).toContain(
      "RATE_LIMITED",
    );
    expect(keys(at(document, "components", "schemas")).sort()).toEqual(["Problem", "Thing"]);
    expect(at(document, "tags")).toEqual([{ name: "things", description: "things endpoints" }]);
  });

  test("default: rate-limited operations document 429 with Retry-After, exempt ones do not", async () => {
    const document = await documentOf((app) => {
      app.get("/api/x", { schema: { response: { 200: Type.Object({}) } } }, async () => ({}));
      app.get("/healthz", { schema: { response: { 200: Type.Object({}) } } }, async () => ({}));
    });
    const limited = at(document, "paths", "/api/x", "get", "responses");
    expect(at(limited, "429", "headers", "Retry-After", "schema")).toEqual({ type: "integer", minimum: 1 });
    expect(keys(at(limited, "429", "content"))).toEqual(["application/problem+json"]);
    const exempt = at(document, "paths", "/healthz", "get", "responses");
    expect(at(exempt, "429")).toBeUndefined();
    // an operation with no 4xx of its own still documents the malformed-request family
    expect(keys(exempt)).toEqual(["200", "4XX"]);
  });

  test("default: operations with a body document 400, 413 and 415", async () => {
    const document = await documentOf((app) =>
      app.post("/api/y", { schema: { body: Type.Object({ a: Type.String() }) } }, async () => ({})),
    );
    const responses = at(document, "paths", "/api/y", "post", "responses");
    expect(keys(responses).sort()).toEqual(["200", "400", "413", "415", "429"]);
    expect(at(responses, "413", "description")).toContain("PAYLOAD_TOO_LARGE");
    expect(at(responses, "415", "description")).toContain("UNSUPPORTED_MEDIA_TYPE");
    expect(at(responses, "200")).toEqual({ description: "OK" });
  });

  test("args: a query parameter with a default is optional and exemplified by it", async () => {
    const document = await documentOf((app) =>
      app.get(
        "/api/z",
        {
          schema: {
            querystring: Type.Object({
              limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
              q: Type.String({ maxLength: 5 }),
            }),
          },
        },
        async () => ({}),
      ),
    );
    const parameters = at(document, "paths", "/api/z", "get", "parameters");
    expect(parameters).toEqual([
      expect.objectContaining({ name: "limit", in: "query", required: false, example: 25 }),
      expect.objectContaining({ name: "q", in: "query", required: true }),
    ]);
  });

  test("args: an error answered with another schema keeps application/json", async () => {
    const Ready = Type.Object({ status: Type.String() });
    const document = await documentOf((app) =>
      app.get("/readyz", { schema: { response: { 200: Ready, 503: Ready } } }, async () => ({
        status: "ok",
      })),
    );
    expect(keys(at(document, "paths", "/readyz", "get", "responses", "503", "content"))).toEqual([
      "application/json",
    ]);
  });

  test("error: two different schemas with one $id", async () => {
    const Other = Type.Object({ other: Type.Integer() }, { $id: "Thing" });
    await expect(
      documentOf((app) => {
        app.get("/a", { schema: { response: { 200: Thing } } }, async () => ({}));
        app.get("/b", { schema: { response: { 200: Other } } }, async () => ({}));
      }),
    ).rejects.toThrow('OpenAPI: two different schemas have the $id "Thing"');
  });
});
