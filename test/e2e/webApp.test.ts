import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import type { FastifyInstance } from "fastify";
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildWeb } from "../../scripts/buildWeb.js";
import { buildApp } from "../../src/api/buildApp.ts";
import type { Config } from "../../src/config/schema.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");

describe("the web explorer's serving (SPEC §12)", () => {
  let chain: DemoChain;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let app: FastifyInstance;
  let webRoot: string;
  let logoServer: Server;
  let logoRequests = 0;

  const appWith = async (config: Config) =>
    buildApp({ ...pipeline.common, config }, { database: db.database, chain: pipeline.chain, webRoot });

  beforeAll(async () => {
    webRoot = mkdtempSync(join(tmpdir(), "protoscan-web-"));
    await buildWeb({ outDir: webRoot });
    logoServer = createServer((request, response) => {
      logoRequests++;
      if (request.url === "/logo.png") response.writeHead(200, { "content-type": "image/png" }).end(PNG);
      else response.writeHead(200, { "content-type": "text/html" }).end("<script>alert(1)</script>");
    });
    logoServer.listen(0, "127.0.0.1");
    await once(logoServer, "listening");
    const logoBase = `http://127.0.0.1:${(logoServer.address() as AddressInfo).port}`;
    chain = await setupDemoChain();
    db = await createTestDatabase();
    const tokens = chain.config.tokens.map((t, i) => ({
      ...t,
      logo: i === 0 ? `${logoBase}/logo.png` : i === 1 ? `${logoBase}/page.html` : "",
    }));
    pipeline = await createTestPipeline({ config: { ...chain.config, tokens }, database: db.database });
    app = await appWith(pipeline.common.config);
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await pipeline?.close();
    await db?.cleanup();
    await chain?.anvil.stop();
    logoServer?.close();
    if (webRoot) rmSync(webRoot, { recursive: true, force: true });
  });

  test("default: / and deep links answer the app's index.html, never cached, under a self-only CSP", async () => {
    for (const url of ["/", "/tx/0xabc", "/address/0x1", "/no/such/page?x=1", "/protocol/demoswap"]) {
      const response = await app.inject({ url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(response.headers["cache-control"]).toBe("no-cache");
      const csp = String(response.headers["content-security-policy"]);
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
      expect(response.body).toMatch(/<script type="module" src="\/assets\/main-[A-Z0-9]+\.js"><\/script>/);
      expect(response.body).not.toMatch(/<script>|https?:\/\//);
    }
  });

  test("default: hashed assets are cached for a year and sent pre-compressed as the client accepts", async () => {
    const index = (await app.inject({ url: "/" })).body;
    const script = index.match(/src="(\/assets\/[^"]+)"/)![1]!;
    const style = index.match(/href="(\/assets\/[^"]+\.css)"/)![1]!;
    const plain = await app.inject({ url: script });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    const br = await app.inject({ url: script, headers: { "accept-encoding": "gzip, deflate, br" } });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload)).toBe(true);
    const gz = await app.inject({ url: style, headers: { "accept-encoding": "gzip" } });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gz.headers["content-type"]).toBe("text/css; charset=utf-8");
    expect(gunzipSync(gz.rawPayload).toString()).toContain("--bg");
    const missing = await app.inject({ url: "/assets/main-DOESNOTEXIST.js" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe("NOT_FOUND");
  });

  test("default: the API's, docs' and operations' paths keep their problem+json 404 and 405", async () => {
    // `/api` and `/v2/api` themselves are the Etherscan-compatible API (SPEC §11): its envelope, not the app.
    for (const url of ["/api", "/v2/api"]) {
      const response = await app.inject({ url });
      expect(response.headers["content-type"], url).toContain("application/json");
      expect(response.json(), url).toMatchObject({ status: "0", message: "NOTOK" });
    }
    for (const url of ["/api/nope", "/api/tx", "/ws/x", "/docs/nope", "/metrics/x"]) {
      const response = await app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.headers["content-type"], url).toContain("application/problem+json");
      expect(response.json().code, url).toBe("NOT_FOUND");
    }
    const wrongMethod = await app.inject({ method: "GET", url: "/api/track-tx" });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.json().code).toBe("METHOD_NOT_ALLOWED");
    const post = await app.inject({ method: "POST", url: "/some/page" });
    expect(post.statusCode).toBe(404);
    expect(post.json().code).toBe("NOT_FOUND");
    expect((await app.inject({ url: "/healthz" })).json()).toMatchObject({ status: "ok" });
  });

  test("default: GET /api/protocols names every configured contract, its TVL addresses and tokens", async () => {
    const body = (await app.inject({ url: "/api/protocols" })).json();
    expect(body).toEqual({
      protocols: chain.config.protocols.map((p) => ({
        id: p.id,
        name: p.name,
        contracts: p.contracts.map((c) => ({
          name: c.name,
          address: getAddress(c.address),
          exclusive: c.exclusive,
        })),
        tvlAddresses: p.tvlAddresses.map((a) => getAddress(a)),
        tokens: chain.config.tokens.filter((t) => t.protocol === p.id).map((t) => getAddress(t.address)),
      })),
    });
    expect(body.protocols[0].contracts.length).toBeGreaterThan(0);
  });

  test("behavior: a token's logo is fetched once and served from this origin; else a badge", async () => {
    const [first, second, third] = chain.config.tokens;
    const logo = await app.inject({ url: `/logos/${first!.address}` });
    expect(logo.statusCode).toBe(200);
    expect(logo.headers["content-type"]).toBe("image/png");
    expect(logo.rawPayload.equals(PNG)).toBe(true);
    expect(String(logo.headers["content-security-policy"])).toContain("sandbox");
    const before = logoRequests;
    await app.inject({ url: `/logos/${first!.address.toUpperCase().replace("0X", "0x")}` });
    expect(logoRequests).toBe(before);

    for (const token of [second!, third!]) {
      const badge = await app.inject({ url: `/logos/${token.address}` });
      expect(badge.statusCode).toBe(200);
      expect(badge.headers["content-type"]).toBe("image/svg+xml");
      expect(badge.body).toContain(`fill="${token.color}"`);
      expect(badge.body).toContain(`>${token.symbol.slice(0, 4)}</text>`);
      expect(badge.body).not.toContain("<script");
    }
    const unknown = await app.inject({ url: "/logos/0x000000000000000000000000000000000000dEaD" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe("NOT_FOUND");
  });

  test("args: ui.enabled false leaves / and every app path a problem+json 404", async () => {
    const off = await appWith({ ...pipeline.common.config, ui: { enabled: false } });
    try {
      for (const url of ["/", "/tx/0xabc", "/assets/x.js", `/logos/${chain.config.tokens[0]!.address}`]) {
        const response = await off.inject({ url });
        expect(response.statusCode, url).toBe(404);
        expect(response.json().code, url).toBe("NOT_FOUND");
      }
      expect((await off.inject({ url: "/api/protocols" })).statusCode).toBe(200);
    } finally {
      await off.close();
    }
  });
});
