import { connect } from "node:net";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import Type from "typebox";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { BODY_LIMIT } from "../../src/api/appDeps.ts";
import { buildApp } from "../../src/api/buildApp.ts";
import { ERROR_REGISTRY, type ErrorCode } from "../../src/api/errorRegistry.ts";
import type { Config } from "../../src/config/schema.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

/**
 * SPEC §4 and §8 at the HTTP edge: body size and type, malformed input below the route schemas, wrong
 * methods, CORS, per-IP rate limits, request ids; every refusal is problem+json with the registry's code.
 */
describe("HTTP limits and problem+json at the edge", () => {
  let chain: DemoChain;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  const apps: FastifyInstance[] = [];
  let app: FastifyInstance;

  /** buildApp with `api` overrides, plus a body-taking route so body handling is tested on its own. */
  async function makeApp(api: Partial<Config["api"]> = {}): Promise<FastifyInstance> {
    const config: Config = { ...chain.config, api: { ...chain.config.api, ...api } };
    const built = await buildApp(
      { ...pipeline.common, config },
      { database: db.database, chain: pipeline.chain, indexerStatus: pipeline.indexer.status },
    );
    built.post(
      "/test/echo",
      {
        schema: {
          body: Type.Object({ txHash: Type.String({ pattern: "^0x[0-9a-fA-F]{64}$" }) }),
          response: { 200: Type.Object({ txHash: Type.String() }) },
        },
      },
      async (request) => request.body as { txHash: string },
    );
    apps.push(built);
    return built;
  }

  beforeAll(async () => {
    chain = await setupDemoChain();
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config: chain.config, database: db.database });
    app = await makeApp({ rateLimitPerMinute: 100_000 });
  });

  afterAll(async () => {
    for (const built of apps) await built.close();
    await pipeline?.close();
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  function expectProblem(response: LightMyRequestResponse, code: ErrorCode, detail?: RegExp | string) {
    const { status, title } = ERROR_REGISTRY[code];
    expect(response.statusCode).toBe(status);
    expect(response.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    const body = response.json();
    expect(body).toEqual({ type: `/docs/errors#${code}`, title, status, detail: expect.any(String), code });
    if (detail !== undefined) expect(body.detail).toMatch(detail);
  }

  const hash = `0x${"ab".repeat(32)}`;

  test("default: a JSON body within the limit is accepted", async () => {
    const response = await app.inject({ method: "POST", url: "/test/echo", payload: { txHash: hash } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ txHash: hash });
  });

  test("error: body over 1 MiB is 413 PAYLOAD_TOO_LARGE, by Content-Length or as sent", async () => {
    const big = JSON.stringify({ txHash: hash, pad: "x".repeat(BODY_LIMIT) });
    const response = await app.inject({
      method: "POST",
      url: "/test/echo",
      headers: { "content-type": "application/json" },
      payload: big,
    });
    expectProblem(response, "PAYLOAD_TOO_LARGE", "request body is larger than 1 MiB");
    // exactly at the limit it is read (and then refused by the schema, not by size)
    const atLimit = JSON.stringify({ txHash: hash, pad: "" });
    const padded = atLimit.replace('"pad":""', `"pad":"${"x".repeat(BODY_LIMIT - atLimit.length)}"`);
    expect(Buffer.byteLength(padded)).toBe(BODY_LIMIT);
    const ok = await app.inject({
      method: "POST",
      url: "/test/echo",
      headers: { "content-type": "application/json" },
      payload: padded,
    });
    expect(ok.statusCode).toBe(200);
  });

  test("error: non-JSON bodies are 415 UNSUPPORTED_MEDIA_TYPE", async () => {
    const cases: [string | undefined, string][] = [
      ["text/plain", JSON.stringify({ txHash: hash })],
      ["text/plain; charset=utf-8", "hello"],
      ["application/xml", "<txHash/>"],
      ["application/x-www-form-urlencoded", `txHash=${hash}`],
      ["multipart/form-data; boundary=x", "--x--"],
      ["application/octet-stream", "\u0000\u0001"],
      [undefined, JSON.stringify({ txHash: hash })],
    ];
    for (const [contentType, payload] of cases) {
      const response = await app.inject({
        method: "POST",
        url: "/test/echo",
        headers: contentType ? { "content-type": contentType } : {},
        payload,
      });
      expectProblem(response, "UNSUPPORTED_MEDIA_TYPE", "request body must be application/json");
    }
  });

  test("error: malformed or empty JSON is 400 INVALID_BODY; a schema mismatch names the field", async () => {
    for (const payload of ["{bad", "", '{"__proto__":{"x":1}}', "[1,2", "nul"]) {
      const response = await app.inject({
        method: "POST",
        url: "/test/echo",
        headers: { "content-type": "application/json" },
        payload,
      });
      expectProblem(response, "INVALID_BODY", /^body: (is not valid JSON|is empty)/);
    }
    const wrong = await app.inject({ method: "POST", url: "/test/echo", payload: { txHash: "0x12" } });
    expectProblem(wrong, "INVALID_BODY", /^txHash: /);
    const missing = await app.inject({ method: "POST", url: "/test/echo", payload: {} });
    expectProblem(missing, "INVALID_BODY", /^txHash: /);
  });

  test("error: every documented operation with a body refuses oversized and non-JSON bodies", async () => {
    const document = (await app.inject({ method: "GET", url: "/openapi.json" })).json();
    const withBody: [string, string][] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      for (const [method, operation] of Object.entries(item)) {
        if ((operation as { requestBody?: unknown }).requestBody) withBody.push([method, path]);
      }
    }
    for (const [method, path] of withBody) {
      const url = path.replace(/\{[^}]+\}/g, "alchemy");
      const base = { method: method.toUpperCase() as "POST", url };
      // Webhook receivers read the raw bytes whatever their type: the signature is checked over them first.
      // The Etherscan-compatible paths answer Etherscan's envelope with HTTP 200 for every request (SPEC §11).
      if (!path.startsWith("/api/webhooks/") && path !== "/api" && path !== "/v2/api") {
        expectProblem(
          await app.inject({ ...base, headers: { "content-type": "text/plain" }, payload: "{}" }),
          "UNSUPPORTED_MEDIA_TYPE",
        );
      }
      expectProblem(
        await app.inject({
          ...base,
          headers: { "content-type": "application/json" },
          payload: `"${"x".repeat(BODY_LIMIT)}"`,
        }),
        "PAYLOAD_TOO_LARGE",
      );
    }
  });

  test("error: wrong method on a known path is 405 with Allow; unknown path is 404", async () => {
    for (const method of ["DELETE", "PUT", "PATCH"] as const) {
      const response = await app.inject({ method, url: `/api/tx/${hash}` });
      expectProblem(
        response,
        "METHOD_NOT_ALLOWED",
        `${method} is not allowed on /api/tx/${hash}; use GET, HEAD`,
      );
      expect(response.headers.allow).toBe("GET, HEAD");
    }
    const post = await app.inject({ method: "POST", url: "/healthz", payload: {} });
    expectProblem(post, "METHOD_NOT_ALLOWED");
    expect(post.headers.allow).toBe("GET, HEAD");
    expectProblem(
      await app.inject({ method: "GET", url: "/api/nothing" }),
      "NOT_FOUND",
      "no route GET /api/nothing",
    );
    expectProblem(await app.inject({ method: "GET", url: "/test/echo" }), "METHOD_NOT_ALLOWED");
    expectProblem(await app.inject({ method: "GET", url: "/docs/static/missing.js" }), "NOT_FOUND");
    const head = await app.inject({ method: "HEAD", url: "/api/nothing" });
    expect(head.statusCode).toBe(404);
  });

  test("error: malformed URLs are problem+json, never Fastify's own body", async () => {
    expectProblem(await app.inject({ method: "GET", url: "/api/tx/%zz" }), "BAD_REQUEST", /^path: /);
    expectProblem(
      await app.inject({ method: "GET", url: `/api/tx/0x${"a".repeat(200)}` }),
      "INVALID_PARAMETER",
      /^path: /,
    );
    expectProblem(
      await app.inject({ method: "GET", url: "/api/transactions/recent?nope=1" }),
      "INVALID_PARAMETER",
      "nope: is not a known parameter",
    );
    expectProblem(
      await app.inject({ method: "GET", url: "/api/transactions/recent?limit=1&limit=2" }),
      "INVALID_PARAMETER",
      /^limit: /,
    );
  });

  test("default: the request id is echoed, the client's when it sends one", async () => {
    const own = await app.inject({
      method: "GET",
      url: "/healthz",
      headers: { "x-request-id": "support-42" },
    });
    expect(own.headers["x-request-id"]).toBe("support-42");
    const generated = await app.inject({ method: "GET", url: "/api/nothing" });
    expect(generated.headers["x-request-id"]).toMatch(/\S+/);
  });

  test("default: CORS with corsOrigins ['*'] allows any origin, on errors too", async () => {
    const response = await app.inject({
      method: "GET",
      url: "/api/nothing",
      headers: { origin: "https://app.example.org" },
    });
    expect(response.headers["access-control-allow-origin"]).toBe("*");
    expect(String(response.headers["access-control-expose-headers"])).toContain("Retry-After");
    const preflight = await app.inject({
      method: "OPTIONS",
      url: "/api/transactions/recent",
      headers: { origin: "https://app.example.org", "access-control-request-method": "GET" },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers["access-control-allow-origin"]).toBe("*");
    expect(String(preflight.headers["access-control-allow-methods"])).toContain("GET");
    // a bare OPTIONS is answered too, not refused with a plain-text 400
    const bare = await app.inject({ method: "OPTIONS", url: "/api/tx/0x12" });
    expect(bare.statusCode).toBe(204);
  });

  test("args: CORS with a list of origins allows only those", async () => {
    const listed = await makeApp({ corsOrigins: ["https://explorer.example.org"] });
    const allowed = await listed.inject({
      method: "GET",
      url: "/healthz",
      headers: { origin: "https://explorer.example.org" },
    });
    expect(allowed.headers["access-control-allow-origin"]).toBe("https://explorer.example.org");
    expect(String(allowed.headers.vary)).toContain("Origin");
    const other = await listed.inject({
      method: "GET",
      url: "/healthz",
      headers: { origin: "https://evil.example" },
    });
    expect(other.statusCode).toBe(200);
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
  });

  test("error: over rateLimitPerMinute from one IP is 429 RATE_LIMITED with Retry-After", async () => {
    const limited = await makeApp({ rateLimitPerMinute: 3 });
    const from = (remoteAddress: string, url = "/api/transactions/recent?limit=1") =>
      limited.inject({ method: "GET", url, remoteAddress });
    for (let i = 0; i < 3; i++) {
      const ok = await from("10.0.0.1");
      expect(ok.statusCode).toBe(200);
      expect(ok.headers["x-ratelimit-limit"]).toBe("3");
      expect(ok.headers["x-ratelimit-remaining"]).toBe(String(2 - i));
    }
    const refused = await from("10.0.0.1");
    expectProblem(
      refused,
      "RATE_LIMITED",
      "more than 3 requests per minute from this address; retry in 60 s",
    );
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60);
    // the limit counts every limited route together, errors included
    expectProblem(await from("10.0.0.1", `/api/tx/${hash}`), "RATE_LIMITED");
    // another address has its own budget
    expect((await from("10.0.0.2")).statusCode).toBe(200);
    // operational endpoints are never limited
    for (const url of ["/healthz", "/readyz"]) {
      const probe = await from("10.0.0.1", url);
      expect(probe.statusCode).toBe(200);
      expect(probe.headers["x-ratelimit-limit"]).toBeUndefined();
    }
  });

  test("error: requests that are not valid HTTP get a problem+json answer on the socket", async () => {
    const address = await app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = new URL(address);
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), "127.0.0.1");
        let data = "";
        socket.on("data", (chunk) => {
          data += chunk.toString("utf8");
        });
        socket.on("error", reject);
        socket.on("close", () => resolve(data));
        socket.write(request);
      });

    const garbage = await raw("NOT HTTP AT ALL\r\n\r\n");
    expect(garbage).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(garbage).toContain("Content-Type: application/problem+json");
    expect(JSON.parse(garbage.split("\r\n\r\n")[1]!)).toMatchObject({ code: "BAD_REQUEST", status: 400 });

    const huge = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(huge.split("\r\n\r\n")[1]!)).toMatchObject({ code: "HEADERS_TOO_LARGE", status: 431 });

    // and a real request over the socket still works, with problem+json for errors
    const notFound = await fetch(`${address}/api/nothing`);
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
  });
});
