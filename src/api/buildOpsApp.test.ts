import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Anvil, startTestAnvil } from "../../test/helpers/anvil.ts";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { testConfig } from "../chain/_test/testCommon.ts";
import { createChainClient } from "../chain/createChainClient.ts";
import type { Common } from "../internal/common.ts";
import { createLogger } from "../internal/logger.ts";
import { createMetrics } from "../internal/metrics.ts";
import { createShutdown } from "../internal/shutdown.ts";
import type { WriterLockStatus } from "../store/createWriterLock.ts";
import { buildOpsApp } from "./buildOpsApp.ts";
import { HTTP_TIMEOUTS } from "./httpTimeouts.ts";

type Line = Record<string, unknown>;

describe("buildOpsApp: the ops server of an indexer", () => {
  let anvil: Anvil;
  let db: TestDatabase;
  let app: FastifyInstance;
  let common: Common;
  const lines: Line[] = [];
  const lock: WriterLockStatus = { held: false, since: null, connected: true };

  beforeAll(async () => {
    anvil = await startTestAnvil();
    db = await createTestDatabase();
    common = {
      config: testConfig({ urls: [anvil.url] }),
      logger: createLogger({
        level: "debug",
        destination: { write: (line: string) => lines.push(JSON.parse(line) as Line) },
      }),
      metrics: createMetrics(),
      shutdown: createShutdown(),
    };
    const chain = createChainClient(common);
    app = await buildOpsApp(common, {
      database: db.database,
      chain,
      writerLock: { status: () => ({ ...lock }) },
    });
  });

  afterAll(async () => {
    await app?.close();
    await db?.cleanup();
    await anvil?.stop();
  });

  test("default: the listener has the API's timeouts", () => {
    expect(app.server.headersTimeout).toBe(HTTP_TIMEOUTS.headersTimeout);
    expect(app.server.requestTimeout).toBe(HTTP_TIMEOUTS.requestTimeout);
    expect(app.server.keepAliveTimeout).toBe(HTTP_TIMEOUTS.keepAliveTimeout);
    expect(app.server.timeout).toBe(HTTP_TIMEOUTS.connectionTimeout);
  });

  test("default: /healthz, and /readyz says whether this process is the writer", async () => {
    expect((await app.inject({ url: "/healthz" })).json()).toEqual({ status: "ok" });

    const standby = await app.inject({ url: "/readyz" });
    expect(standby.statusCode).toBe(200);
    expect(standby.json()).toEqual({
      status: "ready",
      checks: {
        database: { ok: true },
        rpc: { ok: true },
        migrations: { ok: true },
        writerLock: { ok: true, detail: "standby" },
      },
      writer: { held: false, since: null },
    });

    const since = new Date("2026-11-21T08:00:00.000Z");
    Object.assign(lock, { held: true, since });
    const active = await app.inject({ url: "/readyz" });
    expect(active.json()).toMatchObject({
      status: "ready",
      checks: { writerLock: { ok: true, detail: "active writer" } },
      writer: { held: true, since: since.toISOString() },
    });
    Object.assign(lock, { held: false, since: null, connected: true });
  });

  test("error: a writer-lock session that is not connected makes /readyz 503 (problem+json)", async () => {
    Object.assign(lock, { connected: false });
    try {
      const response = await app.inject({ url: "/readyz" });
      expect(response.statusCode).toBe(503);
      expect(response.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
      expect(response.json()).toMatchObject({
        status: 503,
        code: "UPSTREAM_UNAVAILABLE",
        detail: "not ready: writerLock failing",
        checks: { database: { ok: true }, writerLock: { ok: false } },
        writer: { held: false, since: null },
      });
    } finally {
      Object.assign(lock, { connected: true });
    }
  });

  test("default: /metrics is Prometheus text with the process's series, and counts requests by route pattern", async () => {
    common.metrics.writerLockHeld.set(1);
    common.metrics.indexerHeadBlock.set(120);
    common.metrics.indexerIndexedBlock.set(100);
    await app.inject({ url: "/healthz" });
    await app.inject({ url: "/nope/123" });
    const response = await app.inject({ url: "/metrics" });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = response.body;
    expect(text).toContain("protoscan_writer_lock_held 1");
    expect(text).toContain("protoscan_indexer_lag_blocks 20");
    expect(text).toMatch(
      /protoscan_http_requests_total\{method="GET",route="\/healthz",status="200"\} [1-9]/,
    );
    expect(text).toMatch(/protoscan_http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    expect(text).not.toContain("/nope/123");
    expect(text).toContain("protoscan_http_request_duration_seconds_bucket");
    expect(text).toMatch(/protoscan_rpc_requests_total\{method="eth_blockNumber",outcome="ok"\} [1-9]/);
  });

  test("default: one access-log line per request with reqId, method, route pattern, status and ms", async () => {
    lines.length = 0;
    const response = await app.inject({ url: "/nope/abc", headers: { "x-request-id": "req-42" } });
    expect(response.headers["x-request-id"]).toBe("req-42");
    const line = lines.find((l) => l.msg === "request");
    expect(line).toMatchObject({
      level: 30,
      reqId: "req-42",
      method: "GET",
      route: "unmatched",
      status: 404,
    });
    expect(typeof line?.ms).toBe("number");
    // Probes are logged at debug, so polling them does not flood the log at info.
    lines.length = 0;
    await app.inject({ url: "/healthz" });
    expect(lines.find((l) => l.msg === "request")).toMatchObject({
      level: 20,
      route: "/healthz",
      status: 200,
    });
  });
});
