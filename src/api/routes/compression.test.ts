import { gunzipSync } from "node:zlib";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { TestDatabase } from "../../../test/helpers/db.ts";
import type { Broadcaster } from "../../ingest/broadcaster.ts";
import { commitBatch } from "../../store/commitBatch.ts";
import { COMPRESS_MIN_BYTES } from "../cache/cachedBody.ts";
import { BLOCK_TIME, hash, header, openRouteApps, type RouteApps, tx } from "./_test/routeApps.ts";

// 1,000 hourly buckets ending at the blocks' hour: a body of tens of KB, above the compression threshold.
const to = BLOCK_TIME.getTime() / 1000 + 1800;
const HISTORY = `/api/stats/history?interval=hour&from=${to - 999 * 3600}&to=${to}`;
const PROTOCOL_HISTORY = `/api/protocol/demoswap/history?interval=hour&from=${to - 999 * 3600}&to=${to}`;

/**
 * Compression of cached bodies (cache/cachedReply.ts): a body of `COMPRESS_MIN_BYTES` or more is sent gzipped
 * to a client that accepts gzip, the same bytes the identity answer has once decompressed, never stale after
 * the event that empties the cache; smaller bodies and other clients get the bytes as they are.
 */
describe("gzip of cached response bodies", () => {
  let tdb: TestDatabase;
  let cached: FastifyInstance;
  let uncached: FastifyInstance;
  let events: Broadcaster;
  let apps: RouteApps | undefined;

  beforeAll(async () => {
    apps = await openRouteApps();
    ({ tdb, cached, uncached, events } = apps);
  });
  afterAll(async () => {
    await apps?.close();
  });

  const get = (url: string, acceptEncoding?: string, method: "GET" | "HEAD" = "GET") =>
    cached.inject({
      method,
      url,
      headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding },
    });

  test("default: a gzip answer decompresses to exactly the identity body, with its headers", async () => {
    for (const url of [HISTORY, PROTOCOL_HISTORY]) {
      const identity = await get(url);
      const fresh = await uncached.inject({ url });
      expect(identity.statusCode).toBe(200);
      expect(identity.rawPayload.length).toBeGreaterThanOrEqual(COMPRESS_MIN_BYTES);
      expect(identity.body).toBe(fresh.body);
      expect(identity.headers["content-encoding"]).toBeUndefined();
      expect(identity.headers.vary).toBe("Accept-Encoding");
      expect(identity.headers["content-length"]).toBe(String(identity.rawPayload.length));
      // The first gzip request compresses, the second is sent the kept bytes: both the same.
      for (const round of [1, 2]) {
        const gzipped = await get(url, "gzip, deflate, br");
        expect(gzipped.statusCode, `round ${round}`).toBe(200);
        expect(gzipped.headers["content-encoding"]).toBe("gzip");
        expect(gzipped.headers.vary).toBe("Accept-Encoding");
        expect(gzipped.headers["content-type"]).toBe("application/json; charset=utf-8");
        expect(gzipped.headers["content-length"]).toBe(String(gzipped.rawPayload.length));
        expect(gzipped.rawPayload.length).toBeLessThan(identity.rawPayload.length / 4);
        expect(gunzipSync(gzipped.rawPayload).equals(identity.rawPayload)).toBe(true);
      }
      // The identity answer is unchanged by the kept compressed copy.
      expect((await get(url)).rawPayload.equals(identity.rawPayload)).toBe(true);
    }
  });

  test("args: Accept-Encoding weights decide; `gzip;q=0`, an unknown coding and no header get identity", async () => {
    const identity = (await get(HISTORY)).rawPayload;
    const cases: [string | undefined, boolean][] = [
      [undefined, false],
      ["", false],
      ["gzip;q=0", false],
      ["GZIP; Q=0.000", false],
      ["br, deflate", false],
      ["*;q=0", false],
      ["gzip;q=0, *", false],
      ["gzip;q=0.5, identity;q=1", false],
      ["gzip;q=nope", false],
      ["gzip", true],
      ["x-gzip", true],
      ["*", true],
      ["br;q=1, gzip;q=0.8", true],
      ["identity;q=0.5, gzip;q=0.5", true],
    ];
    for (const [header, gzip] of cases) {
      const answer = await get(HISTORY, header);
      expect(answer.statusCode, String(header)).toBe(200);
      expect(answer.headers["content-encoding"], String(header)).toBe(gzip ? "gzip" : undefined);
      expect(answer.headers.vary, String(header)).toBe("Accept-Encoding");
      const body = gzip ? gunzipSync(answer.rawPayload) : answer.rawPayload;
      expect(body.equals(identity), String(header)).toBe(true);
    }
  });

  test("behavior: after the event that empties the cache, the gzip answer is the new body, never stale bytes", async () => {
    const before = await get(HISTORY, "gzip");
    expect(before.headers["content-encoding"]).toBe("gzip");
    const count = (body: Buffer) =>
      (JSON.parse(body.toString()) as { points: { transactionCount: number }[] }).points.reduce(
        (sum, p) => sum + p.transactionCount,
        0,
      );
    const countBefore = count(gunzipSync(before.rawPayload));
    await commitBatch(tdb.database.db, {
      source: "poll",
      transactions: [tx(3)],
      blocks: [header(3)],
      deltaTokens: new Set(),
    });
    // Without the event, the kept bytes are still sent (the cache is emptied by events, not by reads).
    expect((await get(HISTORY, "gzip")).rawPayload.equals(before.rawPayload)).toBe(true);
    events.publish([{ type: "transaction", transaction: tx(3), source: "poll" }]);
    const after = await get(HISTORY, "gzip");
    expect(after.headers["content-encoding"]).toBe("gzip");
    const decompressed = gunzipSync(after.rawPayload);
    expect(decompressed.toString()).toBe((await uncached.inject({ url: HISTORY })).body);
    expect(count(decompressed)).toBe(countBefore + 1);
    expect((await get(HISTORY)).rawPayload.equals(decompressed)).toBe(true);
  });

  test("behavior: HEAD of a compressible body sends the gzip answer's headers and no body", async () => {
    const gzipped = await get(HISTORY, "gzip");
    const head = await get(HISTORY, "gzip", "HEAD");
    expect(head.statusCode).toBe(200);
    expect(head.headers["content-encoding"]).toBe("gzip");
    expect(head.headers.vary).toBe("Accept-Encoding");
    expect(head.headers["content-length"]).toBe(String(gzipped.rawPayload.length));
    expect(head.rawPayload.length).toBe(0);
  });

  test("behavior: a body under the threshold is sent as it is, without Vary", async () => {
    const url = `/api/tx/${hash(1)}`;
    const identity = await get(url);
    expect(identity.rawPayload.length).toBeLessThan(COMPRESS_MIN_BYTES);
    for (let i = 0; i < 2; i++) {
      const answer = await get(url, "gzip");
      expect(answer.statusCode).toBe(200);
      expect(answer.headers["content-encoding"]).toBeUndefined();
      expect(answer.headers.vary).toBeUndefined();
      expect(answer.rawPayload.equals(identity.rawPayload)).toBe(true);
    }
  });

  test("behavior: a real client (fetch) reads the gzip answer as the identity body", async () => {
    const origin = await cached.listen({ host: "127.0.0.1", port: 0 });
    const response = await fetch(`${origin}${HISTORY}`, { headers: { "accept-encoding": "gzip" } });
    expect(response.headers.get("content-encoding")).toBe("gzip");
    expect(await response.text()).toBe((await uncached.inject({ url: HISTORY })).body);
  });
});
