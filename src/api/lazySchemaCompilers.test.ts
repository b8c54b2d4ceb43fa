import Fastify, { type FastifyInstance } from "fastify";
import Type from "typebox";
import { afterEach, describe, expect, test } from "vitest";
import { compileRouteSchemas, lazySchemaCompilers } from "./lazySchemaCompilers.ts";

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

/** An app as buildApp makes it: Ajv coercing types, schemas compiled by `lazySchemaCompilers`. */
function lazyApp(): FastifyInstance {
  const schemas = lazySchemaCompilers();
  const app = Fastify({
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, allErrors: false } },
    schemaController: { compilersFactory: schemas.compilersFactory },
  });
  schemas.attach(app);
  apps.push(app);
  return app;
}

const schema = {
  querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100 }) }),
  params: Type.Object({ id: Type.String({ pattern: "^[a-z]+$" }) }),
  response: { 200: Type.Object({ id: Type.String(), limit: Type.Integer() }) },
};

describe("lazySchemaCompilers", () => {
  test("validates, coerces and serializes as Fastify's own compilers, each schema compiled on first use", async () => {
    const app = lazyApp();
    app.get("/things/:id", { schema }, async (request) => {
      const { limit } = request.query as { limit: unknown };
      const { id } = request.params as { id: string };
      // `limit` arrives coerced to a number; `secret` is not in the response schema.
      return { id, limit, typeOfLimit: typeof limit, secret: "dropped" };
    });
    await app.ready();

    const ok = await app.inject({ method: "GET", url: "/things/abc?limit=7" });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('{"id":"abc","limit":7}');

    // The validation errors reach Fastify: its message names the field and the rule.
    const tooBig = await app.inject({ method: "GET", url: "/things/abc?limit=1000" });
    expect(tooBig.statusCode).toBe(400);
    expect(tooBig.json()).toMatchObject({ message: "querystring/limit must be <= 100" });
    const badId = await app.inject({ method: "GET", url: "/things/ABC?limit=1" });
    expect(badId.statusCode).toBe(400);
    expect(badId.json()).toMatchObject({ message: 'params/id must match pattern "^[a-z]+$"' });
    // and a later valid request is not judged by the errors of the last one
    expect((await app.inject({ method: "GET", url: "/things/xyz?limit=2" })).body).toBe(
      '{"id":"xyz","limit":2}',
    );
    // GET's querystring, params and 200 serializer were compiled by those requests: what is left is the
    // HEAD route Fastify adds beside it, never asked for
    expect(compileRouteSchemas(app)).toBe(3);
    expect(compileRouteSchemas(app)).toBe(0);
  });

  test("a number coerced to ±Infinity fails validation instead of skipping minimum and maximum", async () => {
    const app = lazyApp();
    app.get("/things/:id", { schema }, async () => ({ id: "abc", limit: 1 }));
    app.post(
      "/sum",
      { schema: { body: Type.Object({ n: Type.Array(Type.Number({ maximum: 10 })) }) } },
      async () => "ok",
    );
    await app.ready();
    // Ajv alone coerces these strings to Infinity and accepts them as `integer` within `maximum: 100`
    for (const value of ["Infinity", "-Infinity", "1e400", "%2BInfinity"]) {
      const response = await app.inject({ method: "GET", url: `/things/abc?limit=${value}` });
      expect(response.statusCode, value).toBe(400);
      expect(response.json(), value).toMatchObject({ message: "querystring/limit must be a finite number" });
    }
    const nested = await app.inject({ method: "POST", url: "/sum", payload: { n: [1, "Infinity"] } });
    expect(nested.statusCode).toBe(400);
    expect(nested.json()).toMatchObject({ message: "body/n/1 must be a finite number" });
    // finite values still pass, and their bounds still hold
    expect((await app.inject({ method: "GET", url: "/things/abc?limit=100" })).statusCode).toBe(200);
    expect((await app.inject({ method: "POST", url: "/sum", payload: { n: [1, "2.5"] } })).statusCode).toBe(
      200,
    );
    expect((await app.inject({ method: "POST", url: "/sum", payload: { n: [11] } })).statusCode).toBe(400);
  });

  test("nothing is compiled while the app starts; compileRouteSchemas compiles every route's schemas", async () => {
    const app = lazyApp();
    app.get("/a/:id", { schema }, async () => ({ id: "a", limit: 1 }));
    app.post("/b", { schema: { body: Type.Object({ n: Type.Number() }) } }, async () => "ok");
    await app.ready();
    // GET /a (querystring, params, response), its HEAD twin (the same three), POST /b (body)
    expect(compileRouteSchemas(app)).toBe(7);
    expect(compileRouteSchemas(app)).toBe(0);
  });

  test("a schema that does not compile fails compileRouteSchemas, not the start", async () => {
    const app = lazyApp();
    const broken = { querystring: { type: "object", properties: { n: { type: "no-such-type" } } } };
    app.get("/broken", { schema: broken }, async () => "ok");
    await app.ready();
    expect(() => compileRouteSchemas(app)).toThrow(/no-such-type|type/);
  });

  test("an app not built with it has nothing to compile", async () => {
    const app = Fastify();
    apps.push(app);
    await app.ready();
    expect(compileRouteSchemas(app)).toBe(0);
  });
});
