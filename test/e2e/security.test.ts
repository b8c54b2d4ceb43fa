import { createHmac } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { HTTP_TIMEOUTS } from "../../src/api/httpTimeouts.ts";
import type { Config, ConfigFile } from "../../src/config/schema.ts";
import { writeDemoConfig } from "../../src/demo/demoConfig.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { type CliProcess, spawnProtoscan } from "../helpers/processes.ts";
import { type RpcProxy, startRpcProxy } from "../helpers/rpcProxy.ts";

// Issue 8 item 4, SPEC §8: secrets never leave the process (logs, responses, metrics), even on the errors
// that quote the most (RPC down, a provider echoing our URL, bad signatures, a failing price API); oversized,
// deeply nested and slow requests do not exhaust the server; rate limits hold per client address.
// See also test/e2e/httpLimits.test.ts (413/415/400 per route through inject, rate limit by injected address)
// and src/chain/createChainClient.redaction.test.ts (RPC errors built without credentials).

type Answer = { status: number; headers: Record<string, string>; body: string; ms: number };

/** One HTTP request on a fresh connection, optionally from a given local address. */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: options.method ?? "GET",
        headers: options.headers,
        agent: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: Object.fromEntries(
              Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : String(v)]),
            ),
            body: Buffer.concat(chunks).toString("utf8"),
            ms: performance.now() - started,
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

const dump = (answer: Answer) => `${answer.status}\n${JSON.stringify(answer.headers)}\n${answer.body}`;

describe("security: secrets never leave a real protoscan process", { timeout: 180_000 }, () => {
  // Distinct, greppable secrets of every kind the config holds.
  const RPC_USER = "rpcuser";
  const RPC_PASS = "rpcPassw0rdSecret";
  const RPC_KEY = "AlchemyRpcKey0123456789abcdef";
  const SIGNING_KEY = "whsec_SigningKeySecret0123456789";
  const QN_TOKEN = "qnTokenSecret0123456789abcdef";
  const TRACK_KEY = "trackApiKeySecret0123456789";
  const PRICE_KEY = "priceApiKeySecret0123456789";
  const BASIC = Buffer.from(`${RPC_USER}:${RPC_PASS}`).toString("base64");
  const SECRETS = [RPC_PASS, RPC_KEY, SIGNING_KEY, QN_TOKEN, TRACK_KEY, PRICE_KEY, BASIC];

  let chain: DemoChain;
  let proxy: RpcProxy;
  let prices: Server;
  let priceRequests: string[];
  let tmp: string;
  let child: CliProcess;
  let api: string;
  const answers: Answer[] = [];

  beforeAll(async () => {
    chain = await setupDemoChain();
    proxy = await startRpcProxy({ upstream: chain.anvil.url });
    // The price API fails, quoting the request path (which carries the key), like a provider's 401 page.
    priceRequests = [];
    prices = createServer((req, res) => {
      priceRequests.push(req.url ?? "");
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(`internal error for ${req.url}; key ${PRICE_KEY} rejected`);
    });
    await new Promise<void>((resolve) => prices.listen(0, "127.0.0.1", resolve));
    const pricePort = (prices.address() as AddressInfo).port;

    tmp = await mkdtemp(path.join(tmpdir(), "protoscan-security-"));
    const file: ConfigFile = {
      ...chain.configFile,
      indexer: { ...chain.configFile.indexer, pollIntervalSeconds: 1 },
      api: { ...chain.configFile.api, trackTxApiKeys: [TRACK_KEY], rateLimitPerMinute: 100_000 },
      webhooks: { alchemy: { signingKeys: [SIGNING_KEY] }, quicknode: { securityTokens: [QN_TOKEN] } },
      prices: {
        cacheSeconds: 1,
        api: {
          kind: "alchemy",
          apiKey: PRICE_KEY,
          network: "eth-mainnet",
          baseUrl: `http://127.0.0.1:${pricePort}`,
        },
      },
    };
    const configPath = path.join(tmp, "protoscan.yaml");
    await writeDemoConfig(configPath, file);
    const port = new URL(proxy.url).port;
    child = spawnProtoscan(["start"], {
      PROTOSCAN_CONFIG: configPath,
      // overrides rpc.urls: the proxy in front of anvil, with credentials in the URL
      RPC_URL: `http://${RPC_USER}:${RPC_PASS}@127.0.0.1:${port}/v2/${RPC_KEY}`,
      DATA_DIR: path.join(tmp, "data"),
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "debug",
    });
    api = await child.listening(90_000);
  }, 180_000);

  afterAll(async () => {
    await child?.stop();
    await proxy?.close();
    await new Promise<void>((resolve) => (prices ? prices.close(() => resolve()) : resolve()));
    await chain?.anvil.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const call = async (route: string, options: Parameters<typeof send>[1] = {}) => {
    const answer = await send(`${api}${route}`, options);
    answers.push(answer);
    return answer;
  };

  test("behavior: errors that tempt a leak answer without any secret", async () => {
    const token = chain.config.tokens[0]!.address;
    const delivery = JSON.stringify({
      webhookId: "wh_1",
      id: "whevt_1",
      type: "ADDRESS_ACTIVITY",
      event: {},
    });

    // the node up: the price API fails (every tracked token is looked up through it)
    expect((await call(`/api/tokens/${token}`)).status).toBe(200);
    // bad signatures: HMAC with another key, the signing key itself as the signature, none at all
    const wrong = createHmac("sha256", "not-the-key").update(delivery).digest("hex");
    for (const signature of [wrong, SIGNING_KEY, undefined]) {
      const refused = await call("/api/webhooks/alchemy", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(signature ? { "x-alchemy-signature": signature } : {}),
        },
        body: delivery,
      });
      expect(refused.status).toBe(401);
    }
    const qn = await call("/api/webhooks/quicknode", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-qn-nonce": "n1",
        "x-qn-timestamp": String(Math.floor(Date.now() / 1000)),
        "x-qn-signature": QN_TOKEN,
      },
      body: "{}",
    });
    expect(qn.status).toBe(401);
    // track-tx with a wrong key, and with a key that is almost right
    const hash = `0x${"ab".repeat(32)}`;
    for (const key of ["wrong", `${TRACK_KEY}x`]) {
      const denied = await call("/api/track-tx", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({ txHash: hash }),
      });
      expect(denied.status).toBe(401);
    }

    // the node down, its error page quoting our URL with its credentials
    proxy.inject({
      kind: "http",
      status: 502,
      body: `upstream http://${RPC_USER}:${RPC_PASS}@127.0.0.1/v2/${RPC_KEY} failed (auth ${BASIC})`,
    });
    const before = child.lines.length;
    const track = await call("/api/track-tx", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": TRACK_KEY },
      body: JSON.stringify({ txHash: hash }),
    });
    expect(track.status).toBe(503);
    expect(JSON.parse(track.body).code).toBe("UPSTREAM_UNAVAILABLE");
    const ready = await call("/readyz");
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body).code).toBe("UPSTREAM_UNAVAILABLE");
    const address = await call("/api/address/0x000000000000000000000000000000000000dEaD");
    expect(address.status).toBe(503);
    for (const route of ["/api/stats", "/api/overview", "/openapi.json", "/metrics", "/healthz"]) {
      expect((await call(route)).status, route).toBe(200);
    }
    // the indexer's cycles fail against the node too, and say so, quoting the provider's page scrubbed
    const failed = await child.waitForLine(
      (l) =>
        l.msg === "indexer cycle failed; resuming from the cursor next cycle" &&
        child.lines.indexOf(l) >= before,
      30_000,
    );
    expect(String(failed.err)).toContain("upstream http://***@127.0.0.1/v2/*** failed (auth ***)");
    proxy.clearFaults();
    expect(child.lines.some((l) => l.msg === "price API call failed")).toBe(true);
    expect(child.lines.some((l) => l.msg === "webhook delivery refused")).toBe(true);

    // The secrets were really in play: the node got the credentials, the price API the key.
    expect(proxy.lastAuthorization).toBe(`Basic ${BASIC}`);
    expect(priceRequests.some((url) => url.includes(PRICE_KEY))).toBe(true);
    expect(child.lines.length).toBeGreaterThan(before);

    const everything = [
      ...answers.map(dump),
      ...child.lines.map((line) => JSON.stringify(line)),
      child.output(),
    ].join("\n");
    for (const secret of SECRETS) {
      expect(everything.includes(secret), `secret ${secret.slice(0, 4)}… leaked`).toBe(false);
    }
  });
});

describe("security: request limits on a listening server", { timeout: 180_000 }, () => {
  const SIGNING_KEY = "whsec_limits_0123456789";
  let chain: DemoChain;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let app: FastifyInstance;
  let limited: FastifyInstance;
  let url: string;
  let limitedUrl: string;

  beforeAll(async () => {
    chain = await setupDemoChain();
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config: chain.config, database: db.database });
    const make = async (api: Partial<Config["api"]>) => {
      const config: Config = {
        ...chain.config,
        api: { ...chain.config.api, ...api },
        webhooks: { alchemy: { signingKeys: [SIGNING_KEY] } },
      };
      return buildApp(
        { ...pipeline.common, config },
        { database: db.database, chain: pipeline.chain, indexerStatus: pipeline.indexer.status },
      );
    };
    app = await make({ rateLimitPerMinute: 100_000 });
    url = await app.listen({ host: "127.0.0.1", port: 0 });
    limited = await make({ rateLimitPerMinute: 5 });
    // every loopback address reaches it: 127.0.0.1 and 127.0.0.2 are two clients
    limitedUrl = await limited.listen({ host: "0.0.0.0", port: 0 });
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await limited?.close();
    await pipeline?.close();
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  const expectProblem = (answer: Answer, status: number, code: string) => {
    expect(answer.status).toBe(status);
    expect(answer.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    expect(JSON.parse(answer.body)).toMatchObject({ status, code });
  };

  test("default: the listener's timeouts are set", () => {
    const server = app.server;
    expect(server.headersTimeout).toBe(HTTP_TIMEOUTS.headersTimeout);
    expect(server.requestTimeout).toBe(HTTP_TIMEOUTS.requestTimeout);
    expect(server.keepAliveTimeout).toBe(HTTP_TIMEOUTS.keepAliveTimeout);
    expect(server.timeout).toBe(HTTP_TIMEOUTS.connectionTimeout);
    expect(HTTP_TIMEOUTS.headersTimeout).toBeLessThanOrEqual(HTTP_TIMEOUTS.requestTimeout);
  });

  test("error: a body over 1 MiB sent over the wire is 413, with or without Content-Length", async () => {
    const body = JSON.stringify({ txHash: `0x${"ab".repeat(32)}`, pad: "x".repeat(1024 * 1024) });
    const declared = await send(`${url}/api/track-tx`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
      body,
    });
    expectProblem(declared, 413, "PAYLOAD_TOO_LARGE");
    const chunked = await send(`${url}/api/track-tx`, {
      method: "POST",
      headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
      body,
    });
    expectProblem(chunked, 413, "PAYLOAD_TOO_LARGE");
    expect((await send(`${url}/healthz`)).status).toBe(200);
  });

  test("error: 100,000 levels of nested JSON are refused with 4xx and the server stays responsive", async () => {
    const depth = 100_000;
    const arrays = `${"[".repeat(depth)}${"]".repeat(depth)}`;
    const objects = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    const bodies = [
      arrays,
      objects,
      `{"txHash":${arrays}}`,
      `${"[".repeat(depth)}{"__proto__":{"x":1}}${"]".repeat(depth)}`,
      `${"[".repeat(depth)}`, // unterminated
    ];
    for (const body of bodies) {
      const answer = await send(`${url}/api/track-tx`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(answer.status, body.slice(0, 20)).toBeGreaterThanOrEqual(400);
      expect(answer.status, body.slice(0, 20)).toBeLessThan(500);
      expect(answer.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    }
    // A correctly signed delivery nested as deep: its JSON is parsed after the signature check.
    for (const body of [arrays, objects]) {
      const signature = createHmac("sha256", SIGNING_KEY).update(body).digest("hex");
      const answer = await send(`${url}/api/webhooks/alchemy`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-alchemy-signature": signature },
        body,
      });
      expect(answer.status, answer.body).toBeLessThan(500);
    }
    const health = await send(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(health.ms).toBeLessThan(5_000);
  });

  test("behavior: slow-loris sockets are cut by the timeouts while other clients are served", async () => {
    const { port } = new URL(url);
    type Slow = { kind: "headers" | "body" | "silent"; closed: Promise<{ ms: number; data: string }> };
    const open = (kind: Slow["kind"]): Slow => {
      const socket = connect(Number(port), "127.0.0.1");
      const started = performance.now();
      let data = "";
      let timer: NodeJS.Timeout | undefined;
      socket.on("error", () => undefined);
      socket.on("data", (chunk) => {
        data += chunk.toString("utf8");
      });
      socket.on("connect", () => {
        if (kind === "headers") socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ");
        if (kind === "body") {
          socket.write(
            "POST /api/track-tx HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
          );
        }
        // one byte a second, forever: never completing the headers (or the body)
        if (kind !== "silent") timer = setInterval(() => socket.write("a"), 1_000);
      });
      const closed = new Promise<{ ms: number; data: string }>((resolve) => {
        socket.on("close", () => {
          clearInterval(timer);
          resolve({ ms: performance.now() - started, data });
        });
      });
      return { kind, closed };
    };
    const slow: Slow[] = [
      ...Array.from({ length: 40 }, () => open("headers")),
      ...Array.from({ length: 10 }, () => open("body")),
      ...Array.from({ length: 10 }, () => open("silent")),
    ];
    let done = false;
    const all = Promise.all(slow.map((s) => s.closed)).finally(() => {
      done = true;
    });
    // meanwhile an ordinary client keeps being answered
    const served: Answer[] = [];
    while (!done) {
      served.push(await send(`${url}/api/transactions/recent?limit=1`));
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const results = await all;

    expect(served.length).toBeGreaterThan(10);
    expect(served.every((a) => a.status === 200)).toBe(true);
    expect(Math.max(...served.map((a) => a.ms))).toBeLessThan(5_000);
    const slack = HTTP_TIMEOUTS.connectionsCheckingInterval + 10_000; // a loaded machine wakes timers late
    slow.forEach((s, i) => {
      const { ms, data } = results[i]!;
      const limit = s.kind === "body" ? HTTP_TIMEOUTS.requestTimeout : HTTP_TIMEOUTS.headersTimeout;
      expect(ms, s.kind).toBeGreaterThanOrEqual(limit - 500);
      expect(ms, s.kind).toBeLessThan(limit + slack);
      if (s.kind !== "silent") {
        expect(data, s.kind).toMatch(/^HTTP\/1\.1 408 /);
        expect(data).toContain('"code":"REQUEST_TIMEOUT"');
      }
    });
  });

  test("error: the rate limit holds per client address", async () => {
    const route = `${limitedUrl}/api/transactions/recent?limit=1`;
    const from = (localAddress: string, headers: Record<string, string> = {}) =>
      send(route.replace("0.0.0.0", "127.0.0.1"), { localAddress, headers });
    for (let i = 0; i < 5; i++) expect((await from("127.0.0.1")).status).toBe(200);
    const refused = await from("127.0.0.1");
    expectProblem(refused, 429, "RATE_LIMITED");
    const retryAfter = Number(refused.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // a forwarded-for header does not buy a fresh budget (no proxy header is trusted)
    expectProblem(await from("127.0.0.1", { "x-forwarded-for": "203.0.113.9" }), 429, "RATE_LIMITED");
    // track-tx counts against the same budget
    const track = await send(`${limitedUrl.replace("0.0.0.0", "127.0.0.1")}/api/track-tx`, {
      method: "POST",
      localAddress: "127.0.0.1",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ txHash: `0x${"ab".repeat(32)}` }),
    });
    expectProblem(track, 429, "RATE_LIMITED");
    // the other address is still served, with its own budget
    const other = await from("127.0.0.2");
    expect(other.status).toBe(200);
    expect(other.headers["x-ratelimit-remaining"]).toBe("4");
    expect(JSON.parse(other.body)).toHaveProperty("transactions");
  });
});
