import type { FastifyInstance } from "fastify";
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { TestDatabase } from "../../../test/helpers/db.ts";
import { testCommon } from "../../chain/_test/testCommon.ts";
import type { Config } from "../../config/schema.ts";
import { tokensByAddress } from "../../config/tokensByAddress.ts";
import { DEMO, ROUTER, USDC } from "../../decode/_test/testRegistry.ts";
import type { Broadcaster } from "../../ingest/broadcaster.ts";
import { createPriceHistory } from "../../prices/createPriceHistory.ts";
import { createTransactionValuer } from "../../prices/transactionValues.ts";
import { ALICE, BOB } from "../../realtime/_test/fixtures.ts";
import { commitBatch } from "../../store/commitBatch.ts";
import { insertPricePoints } from "../../store/priceHistoryReads.ts";
import { removeBlocks } from "../../store/removeBlocks.ts";
import { getTransactionSummaries } from "../../store/transactionSummaries.ts";
import { toTransactionsJson } from "../toTransactionJson.ts";
import { blockHash, hash, header, openRouteApps, type RouteApps, tx } from "./_test/routeApps.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The response caches of the transaction routes, on a database written directly: a write without its event
 * shows what is cached, the event shows it is dropped. The e2e tests (test/e2e/transactionApi.test.ts) check
 * the bodies against the chain without caches.
 */
describe("response caches of the transaction routes (with events)", () => {
  let tdb: TestDatabase;
  let cached: FastifyInstance;
  let uncached: FastifyInstance;
  let events: Broadcaster;
  let config: Config;
  let apps: RouteApps | undefined;

  beforeAll(async () => {
    apps = await openRouteApps();
    ({ tdb, cached, uncached, events, config } = apps);
  });
  afterAll(async () => {
    await apps?.close();
  });

  const recentHashes = async (app: FastifyInstance) =>
    (
      (await app.inject({ url: "/api/transactions/recent" })).json() as { transactions: { txHash: string }[] }
    ).transactions.map((t) => t.txHash);

  test("default: a cached body is the one served without the cache, byte for byte", async () => {
    for (const url of [`/api/tx/${hash(1)}`, "/api/transactions/recent?limit=1", `/api/tx/${hash(1)}`]) {
      const [a, b] = [await cached.inject({ url }), await uncached.inject({ url })];
      expect(a.statusCode).toBe(200);
      expect(a.headers["content-type"]).toBe(b.headers["content-type"]);
      expect(a.body).toBe(b.body);
    }
    expect((await cached.inject({ url: `/api/tx/${hash(9)}` })).statusCode).toBe(404);
  });

  test("behavior: with or without a cache, an argument name holding a line terminator is kept", async () => {
    // Fastify's schema serializer would drop it (`Type.Record` is `patternProperties: ^.*$`): both paths
    // write the body with JSON.stringify, as the WebSocket does.
    const odd = { ...tx(11), functionArgs: { "line\nbreak": "1", "para\u2029graph": "2", plain: "3" } };
    await commitBatch(tdb.database.db, {
      source: "poll",
      transactions: [odd],
      blocks: [header(11)],
      deltaTokens: new Set(),
    });
    try {
      const url = `/api/tx/${hash(11)}`;
      const [a, b] = [await cached.inject({ url }), await uncached.inject({ url })];
      expect(b.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(a.body).toBe(b.body);
      expect(b.json().decodedData.args).toEqual(odd.functionArgs);
    } finally {
      const { removed } = await removeBlocks(tdb.database.db, { after: 10 }, new Set());
      events.publish(removed.map((r) => ({ type: "removed" as const, removed: r })));
    }
  });

  test("behavior: concurrent reads of cold hashes (repeated, any case, one missing) are answered as one at a time", async () => {
    const urls = [hash(1), hash(2), hash(9), hash(1), `0x${hash(2).slice(2).toUpperCase()}`].map(
      (h) => `/api/tx/${h}`,
    );
    const sequential = [];
    for (const url of urls) sequential.push(await uncached.inject({ url }));
    const concurrent = await Promise.all(urls.map((url) => uncached.inject({ url })));
    expect(concurrent.map((r) => r.statusCode)).toEqual([200, 200, 404, 200, 200]);
    expect(concurrent.map((r) => r.body)).toEqual(sequential.map((r) => r.body));
    expect(concurrent[0]!.json()).toMatchObject({ txHash: hash(1) });
    expect(concurrent[4]!.json()).toMatchObject({ txHash: hash(2) });
  });

  test("default: the kept bytes are the Transaction freshly built from the stored rows, field by field (SPEC §4)", async () => {
    const url = `/api/tx/${hash(2)}`;
    await cached.inject({ url }); // built and kept
    const hit = await cached.inject({ url });
    expect(hit.statusCode).toBe(200);
    expect(hit.headers["content-type"]).toBe("application/json; charset=utf-8");
    const [summary] = await getTransactionSummaries(tdb.database.db, [hash(2)]);
    const common = testCommon(config);
    const valuer = createTransactionValuer(config, createPriceHistory(common, { db: tdb.database.db }));
    const [fresh] = await toTransactionsJson([summary!], tokensByAddress(config), valuer);
    expect(hit.json()).toEqual(JSON.parse(JSON.stringify(fresh)));
    expect(hit.json()).toEqual({
      txHash: hash(2),
      blockNumber: 2,
      blockHash: blockHash(2),
      transactionIndex: 0,
      blockTimestamp: "2026-11-21T08:00:00.000Z",
      fromAddress: getAddress(ALICE),
      toAddress: getAddress(ROUTER),
      contractAddress: null,
      valueWei: "0",
      gasUsed: "21000",
      gasPrice: "1",
      status: true,
      protocol: "demoswap",
      actionType: expect.any(String),
      functionName: "swapExactTokensForTokens",
      decodedData: { args: expect.any(Object), events: expect.any(Array) },
      tokenTransfers: [
        {
          tokenAddress: getAddress(DEMO),
          tokenSymbol: "DEMO",
          fromAddress: getAddress(ALICE),
          toAddress: getAddress(ROUTER),
          amount: (10n ** 18n).toString(),
          decimals: 18,
          logIndex: 0,
          valueUsd: null,
        },
        {
          tokenAddress: getAddress(USDC),
          tokenSymbol: "",
          fromAddress: getAddress(ROUTER),
          toAddress: getAddress(BOB),
          amount: "2000000",
          decimals: 18,
          logIndex: 1,
          valueUsd: null,
        },
      ],
      valueUsd: null,
      source: "poll",
    });
  });

  test("behavior: a price-history change empties the kept bodies; the next answer carries the new valueUsd", async () => {
    const url = `/api/tx/${hash(1)}`;
    const demoValue = async (app: FastifyInstance) =>
      ((await app.inject({ url })).json() as { tokenTransfers: { valueUsd: number | null }[] })
        .tokenTransfers[0]!.valueUsd;
    const time = new Date("2026-11-21T08:00:00.000Z"); // the block's time
    const price = (priceUsd: number) =>
      insertPricePoints(tdb.database.db, [
        { tokenAddress: DEMO, source: "api", time, priceUsd, origin: "backfill" },
      ]);
    await demoValue(cached); // kept
    for (const usd of [2.5, 4]) {
      await price(usd);
      expect(await demoValue(uncached)).toBe(usd); // 1 DEMO
      // The notice of the commit (migration 0015's trigger) arrives on its own: the cache serves the new value
      // once it has, and would keep the old body forever without it.
      const started = Date.now();
      while ((await demoValue(cached)) !== usd && Date.now() - started < 5_000) await sleep(20);
      expect(await demoValue(cached)).toBe(usd);
    }
  });

  test("behavior: recent lists are kept until a transaction is stored", async () => {
    expect(await recentHashes(cached)).toEqual([hash(2), hash(1)]);
    await commitBatch(tdb.database.db, {
      source: "poll",
      transactions: [tx(3)],
      blocks: [header(3)],
      deltaTokens: new Set(),
    });
    expect(await recentHashes(cached)).toEqual([hash(2), hash(1)]);
    expect(await recentHashes(uncached)).toEqual([hash(3), hash(2), hash(1)]);
    events.publish([{ type: "transaction", transaction: tx(3), source: "poll" }]);
    expect(await recentHashes(cached)).toEqual([hash(3), hash(2), hash(1)]);
  });

  test("behavior: a transaction is kept until one is removed; a 404 is never kept", async () => {
    expect((await cached.inject({ url: `/api/tx/${hash(4)}` })).statusCode).toBe(404);
    await commitBatch(tdb.database.db, {
      source: "poll",
      transactions: [tx(4)],
      blocks: [header(4)],
      deltaTokens: new Set(),
    });
    // Kept from its second read (TX_CACHE_DOORKEEPER): a hash read once is not.
    expect((await cached.inject({ url: `/api/tx/${hash(4)}` })).statusCode).toBe(200);
    expect((await cached.inject({ url: `/api/tx/${hash(4)}` })).statusCode).toBe(200);
    const { removed } = await removeBlocks(tdb.database.db, { after: 3 }, new Set());
    expect((await cached.inject({ url: `/api/tx/${hash(4)}` })).statusCode).toBe(200);
    events.publish(removed.map((r) => ({ type: "removed" as const, removed: r })));
    const gone = await cached.inject({ url: `/api/tx/${hash(4)}` });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({ code: "TX_NOT_FOUND" });
    expect((await cached.inject({ url: `/api/tx/${hash(1)}` })).json()).toMatchObject({ txHash: hash(1) });
  });

  test("behavior: protocol, address and token-event pages are kept until a transaction is stored", async () => {
    const urls = [
      "/api/protocol/demoswap/transactions?limit=2",
      `/api/address/${ALICE}/transactions?limit=2`,
      `/api/tokens/${DEMO}/events?limit=2`,
    ];
    const before = await Promise.all(urls.map(async (url) => (await cached.inject({ url })).body));
    await commitBatch(tdb.database.db, {
      source: "poll",
      transactions: [tx(10)],
      blocks: [header(10)],
      deltaTokens: new Set(),
    });
    for (const [i, url] of urls.entries()) {
      const [a, b] = [await cached.inject({ url }), await uncached.inject({ url })];
      expect(a.body, url).toBe(before[i]);
      expect(b.body, url).toContain(hash(10));
    }
    events.publish([{ type: "transaction", transaction: tx(10), source: "poll" }]);
    for (const url of urls) {
      const [a, b] = [await cached.inject({ url }), await uncached.inject({ url })];
      expect(a.statusCode, url).toBe(200);
      expect(a.body, url).toBe(b.body);
    }
  });

  test("behavior: the overview is kept until a transaction is stored", async () => {
    const overview = async (app: FastifyInstance) => {
      const body = (await app.inject({ url: "/api/overview" })).json() as {
        totals: { transactions: number };
        latestTransactions: { txHash: string }[];
      };
      return { total: body.totals.transactions, newest: body.latestTransactions[0]?.txHash };
    };
    const before = await overview(cached);
    expect(before).toEqual(await overview(uncached));
    expect(await overview(cached)).toEqual(before); // a hit
    await commitBatch(tdb.database.db, {
      source: "poll",
      transactions: [tx(11)],
      blocks: [header(11)],
      deltaTokens: new Set(),
    });
    expect(await overview(cached)).toEqual(before);
    expect(await overview(uncached)).toEqual({ total: before.total + 1, newest: hash(11) });
    events.publish([{ type: "transaction", transaction: tx(11), source: "poll" }]);
    expect(await overview(cached)).toEqual({ total: before.total + 1, newest: hash(11) });
  });
});
