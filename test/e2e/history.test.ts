import { sql } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import {
  type Address,
  createPublicClient,
  erc20Abi,
  formatUnits,
  http,
  parseEther,
  parseUnits,
  toHex,
} from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import type { Config } from "../../src/config/schema.ts";
import { createJsonRpc, type DemoTx } from "../../src/demo/demoClient.ts";
import { deltaTokensOf } from "../../src/ingest/_test/balances.ts";
import type { PriceHistory } from "../../src/prices/createPriceHistory.ts";
import { createTransactionValuer } from "../../src/prices/transactionValues.ts";
import { createTimeSeries } from "../../src/stats/createTimeSeries.ts";
import { type ExpectedTransaction, readExpectedTransactions } from "../helpers/chainActivity.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { swapExact, tokenTransfer, vaultClaim, vaultDeposit } from "../helpers/demoTxs.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { reorgChain } from "../helpers/reorg.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

type Point = {
  time: string;
  transactionCount: number;
  uniqueUsers: number;
  volumeUsd: number;
  tvlUsd?: number | null;
};
type HistoryBody = { interval: string; from: string; to: string; points: Point[] };

/**
 * SPEC §10.3 on the demo chain with block times spread over days: every bucket the API serves is computed again
 * here from the chain alone (receipts for counts, users and volumes; balanceOf at the bucket's last block for
 * TVL) and compared, for hour and day, per protocol and for all, before and after a reorg of the last block.
 * Prices come from a deterministic price-at-time function given to both (price history is tested with it).
 */
describe("protocol and global history (SPEC §10.3)", () => {
  let chain: DemoChain;
  let config: Config;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let app: FastifyInstance;
  let client: ReturnType<typeof createPublicClient>;
  let clock: Date;
  let firstTime: number;

  /** A token's price moves every hour; RWD has none. */
  const priceOf = (token: string, at: Date): number | null => {
    const symbol = config.tokens.find((t) => t.address === token)?.symbol;
    const base = symbol === "USDC" ? 1 : symbol === "DEMO" ? 2 : symbol === "WETH" ? 3000 : null;
    if (base === null) return null;
    return base * (1 + (Math.floor(at.getTime() / HOUR) % 24) / 100);
  };
  /** Price history as these prices: what every USD value of the app is computed from here. */
  const prices: PriceHistory = {
    async pricesAt(queries) {
      return queries.map((q) => {
        const usd = priceOf(q.token.toLowerCase(), q.time);
        return usd === null ? null : { usd, source: "static", at: q.time };
      });
    },
    async priceAt(token, time) {
      const [price] = await this.pricesAt([{ token, time }]);
      return price ?? null;
    },
  };

  const get = async <T>(url: string): Promise<T> => {
    const response = await app.inject({ method: "GET", url });
    expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    return response.json() as T;
  };

  /** Mine one block holding `txs` at exactly `timestamp` (seconds). */
  async function mineAt(timestamp: number, txs: readonly DemoTx[]): Promise<void> {
    const rpc = createJsonRpc(chain.anvil.url);
    await rpc("evm_setAutomine", [false]);
    try {
      const nonces = new Map<string, number>();
      for (const tx of txs) {
        const nonce =
          nonces.get(tx.from) ??
          (await client.getTransactionCount({ address: tx.from, blockTag: "pending" }));
        nonces.set(tx.from, nonce + 1);
        await rpc("eth_sendTransaction", [
          {
            from: tx.from,
            to: tx.to,
            data: tx.data,
            gas: toHex(tx.gas ?? 300_000n),
            nonce: toHex(nonce),
            ...(tx.value !== undefined ? { value: toHex(tx.value) } : {}),
          },
        ]);
      }
      await rpc("evm_setNextBlockTimestamp", [toHex(timestamp)]);
      await rpc("evm_mine", []);
    } finally {
      await rpc("evm_setAutomine", [true]);
    }
  }

  beforeAll(async () => {
    chain = await setupDemoChain();
    // Every token exclusive: its whole history is indexed (delta balances), so TVL is known at every time.
    config = { ...chain.config, tokens: chain.config.tokens.map((t) => ({ ...t, exclusive: true })) };
    client = createPublicClient({ transport: http(chain.anvil.url) });
    const d = chain.deployment;
    const u = d.users;
    const head = await client.getBlock();
    // Blocks from a day after the deployment on, 5 to 11 hours apart, several senders per block.
    let t = Math.ceil(Number(head.timestamp) / 3600) * 3600 + 86_400;
    for (let k = 0; k < 14; k++) {
      const [a, b, c] = [u[k % u.length]!, u[(k + 1) % u.length]!, u[(k + 2) % u.length]!];
      const txs: DemoTx[] = [
        swapExact(d, a, ["WETH", "USDC"], parseEther("0.05") * BigInt(1 + (k % 3))),
        tokenTransfer(d, "DEMO", b, c, parseUnits(String(k + 1), 18)),
      ];
      if (k % 2 === 0) txs.push(swapExact(d, c, ["USDC", "DEMO"], parseUnits(String(10 + k), 6)));
      if (k % 3 === 0) txs.push(vaultDeposit(d, b, parseUnits("5", 18)));
      if (k % 4 === 3) txs.push(vaultClaim(d, b));
      await mineAt(t, txs);
      t += (5 + (k % 7)) * 3600 + 17 * 60;
    }
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config, database: db.database });
    await pipeline.catchUp();
    const last = await client.getBlock();
    clock = new Date(Number(last.timestamp) * 1000 + 3 * HOUR);
    const first = await client.getBlock({ blockNumber: BigInt(config.indexer.startBlock) });
    firstTime = Number(first.timestamp) * 1000;
    app = await buildApp(pipeline.common, {
      database: db.database,
      chain: pipeline.chain,
      indexerStatus: () => pipeline.indexer.status(),
      history: prices,
      timeSeries: createTimeSeries(pipeline.common, {
        db: db.database.db,
        prices,
        valueTransactions: createTransactionValuer(config, prices),
        now: () => clock,
      }),
    });
  });

  afterAll(async () => {
    await app?.close();
    await pipeline?.close();
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  /** The block number and time of every block, to find the last block at or before a time. */
  async function blockTimes(toBlock: number): Promise<{ number: number; time: number }[]> {
    const list = [];
    for (let n = config.indexer.startBlock; n <= toBlock; n++) {
      const block = await client.getBlock({ blockNumber: BigInt(n) });
      list.push({ number: n, time: Number(block.timestamp) * 1000 });
    }
    return list;
  }

  /** SPEC §10.2's per-transaction value, written here again from the rule. */
  function valueUsd(tx: ExpectedTransaction): number {
    const protocol = config.protocols.find((p) => p.id === tx.protocol);
    const own = new Set<string>([
      ...(protocol?.contracts.map((c) => c.address) ?? []),
      ...(protocol?.tvlAddresses ?? []),
    ]);
    let into = 0;
    let out = 0;
    let flow = false;
    let largest = 0;
    for (const tr of tx.transfers) {
      const token = config.tokens.find((t) => t.address === tr.token)!;
      const price = priceOf(tr.token, new Date(tx.timestamp));
      const usd = price === null ? 0 : Number(formatUnits(tr.amount, token.decimals)) * price;
      if (own.has(tr.to)) {
        into += usd;
        flow = true;
      }
      if (own.has(tr.from)) {
        out += usd;
        flow = true;
      }
      largest = Math.max(largest, usd);
    }
    return flow ? Math.max(into, out) : largest;
  }

  async function expectedPoints(
    span: "hour" | "day",
    protocol: string | null,
    from: number,
    to: number,
    indexed: number,
  ): Promise<Point[]> {
    const size = span === "hour" ? HOUR : DAY;
    const txs = (
      await readExpectedTransactions(chain.anvil.url, config, config.indexer.startBlock, indexed)
    ).filter((tx) => protocol === null || tx.protocol === protocol);
    const blocks = await blockTimes(indexed);
    const balanceCache = new Map<number, number>();
    const tvlAtBlock = async (block: number, at: Date): Promise<number> => {
      const p = config.protocols.find((x) => x.id === protocol)!;
      let usd = 0;
      for (const token of config.tokens) {
        for (const holder of new Set(p.tvlAddresses)) {
          const balance = await client.readContract({
            address: token.address as Address,
            abi: erc20Abi,
            functionName: "balanceOf",
            args: [holder as Address],
            blockNumber: BigInt(block),
          });
          const price = priceOf(token.address, at);
          if (price !== null) usd += Number(formatUnits(balance, token.decimals)) * price;
        }
      }
      return usd;
    };
    const points: Point[] = [];
    for (let start = Math.floor(from / size) * size; start <= to; start += size) {
      const inBucket = txs.filter((tx) => tx.timestamp >= start && tx.timestamp < start + size);
      const point: Point = {
        time: new Date(start).toISOString(),
        transactionCount: inBucket.length,
        uniqueUsers: new Set(inBucket.map((tx) => tx.from)).size,
        volumeUsd: inBucket.reduce((sum, tx) => sum + valueUsd(tx), 0),
      };
      if (protocol !== null) {
        const before = blocks.filter((b) => b.time < start + size).at(-1);
        const at = new Date(Math.min(start + size - 1, clock.getTime()));
        const key = (before?.number ?? -1) * 1e6 + Math.floor(at.getTime() / HOUR);
        if (!balanceCache.has(key)) balanceCache.set(key, before ? await tvlAtBlock(before.number, at) : 0);
        point.tvlUsd = balanceCache.get(key)!;
      }
      points.push(point);
    }
    return points;
  }

  function expectPointsClose(actual: Point[], expected: Point[], label: string) {
    expect(
      actual.map((p) => p.time),
      label,
    ).toEqual(expected.map((p) => p.time));
    actual.forEach((p, i) => {
      const e = expected[i]!;
      const where = `${label} ${p.time}`;
      expect({ n: p.transactionCount, users: p.uniqueUsers }, where).toEqual({
        n: e.transactionCount,
        users: e.uniqueUsers,
      });
      expect(p.volumeUsd, `${where} volumeUsd`).toBeCloseTo(e.volumeUsd, 6);
      if (e.tvlUsd !== undefined)
        expect(p.tvlUsd ?? Number.NaN, `${where} tvlUsd`).toBeCloseTo(e.tvlUsd ?? 0, 4);
    });
  }

  async function expectAllBucketsOnChain(indexed: number) {
    const last = await client.getBlock({ blockNumber: BigInt(indexed) });
    const from = firstTime;
    const to = Number(last.timestamp) * 1000 + HOUR;
    const range = `from=${new Date(from).toISOString()}&to=${Math.floor(to / 1000)}`;
    for (const span of ["hour", "day"] as const) {
      for (const protocol of [null, ...config.protocols.map((p) => p.id)]) {
        const url =
          protocol === null
            ? `/api/stats/history?interval=${span}&${range}`
            : `/api/protocol/${protocol}/history?interval=${span}&${range}`;
        const body = await get<HistoryBody>(url);
        expect(body.interval).toBe(span);
        const expected = await expectedPoints(span, protocol, from, to, indexed);
        expect(
          expected.some((p) => p.transactionCount > 0 && p.volumeUsd > 0),
          url,
        ).toBe(true);
        if (protocol !== null)
          expect(
            expected.some((p) => (p.tvlUsd ?? 0) > 0),
            url,
          ).toBe(true);
        expectPointsClose(body.points, expected, url);
        if (protocol === null) expect(body.points.every((p) => !("tvlUsd" in p))).toBe(true);
      }
    }
  }

  test("default: every bucket equals the chain, hour and day, per protocol and for all", async () => {
    const modes = [...(await deltaTokensOf(config, pipeline.chain, db.database.db))].sort();
    expect(modes).toEqual(config.tokens.map((t) => t.address).sort());
    const indexed = await pipeline.catchUp();
    await expectAllBucketsOnChain(indexed);
    // Twice: the second answer comes from the cached volumes.
    await expectAllBucketsOnChain(indexed);
  });

  test("behavior: the writer's background valuation caches what a request would compute", async () => {
    const indexed = await pipeline.catchUp();
    await db.database.db.execute(sql`delete from history_volumes`);
    const timeSeries = createTimeSeries(pipeline.common, {
      db: db.database.db,
      prices,
      valueTransactions: createTransactionValuer(config, prices),
      now: () => clock,
    });
    let passes = 0;
    while ((await timeSeries.valueStale(20)) > 0) passes++;
    expect(passes).toBeGreaterThan(1);
    // Left stale: only the day in progress (its volume is left to the first request).
    const stale = await db.database.db.execute<{ span: string; bucket: string | Date }>(sql`
      select b.span, b.bucket from history_buckets b
      left join history_volumes v on v.span = b.span and v.protocol = b.protocol and v.bucket = b.bucket
        and v.revision = b.revision
      where v.span is null and b.transaction_count > 0`);
    const today = Math.floor(clock.getTime() / 86_400_000) * 86_400_000;
    for (const row of stale.rows) {
      expect(row.span).toBe("day");
      expect(new Date(row.bucket).getTime()).toBe(today);
    }
    const valued = await db.database.db.execute<{ n: string }>(
      sql`select count(*) as n from history_volumes`,
    );
    expect(Number(valued.rows[0]?.n)).toBeGreaterThan(10);
    // What the API serves from them equals the chain.
    await expectAllBucketsOnChain(indexed);
  });

  test("behavior: cached answers are dropped by the next stored transaction", async () => {
    // The same app with the pipeline's events: history answers are cached until the next ingest event.
    const cached = await buildApp(pipeline.common, {
      database: db.database,
      chain: pipeline.chain,
      events: pipeline.broadcaster,
      history: prices,
      timeSeries: createTimeSeries(pipeline.common, {
        db: db.database.db,
        prices,
        valueTransactions: createTransactionValuer(config, prices),
        now: () => clock,
      }),
    });
    try {
      const url = `/api/stats/history?interval=day&from=${new Date(firstTime).toISOString()}&to=${Math.floor(clock.getTime() / 1000)}`;
      const count = async () =>
        ((await cached.inject({ method: "GET", url })).json() as HistoryBody).points.reduce(
          (n, p) => n + p.transactionCount,
          0,
        );
      const before = await count();
      expect(await count()).toBe(before);
      const d = chain.deployment;
      const last = await client.getBlock();
      await mineAt(Number(last.timestamp) + 60, [tokenTransfer(d, "DEMO", d.users[0]!, d.users[1]!, 1n)]);
      await pipeline.catchUp();
      expect(await count()).toBe(before + 1);
    } finally {
      await cached.close();
    }
  });

  test("behavior: a reorg that replaces the last bucket's transactions", async () => {
    const d = chain.deployment;
    const u = d.users;
    const before = await get<HistoryBody>(
      `/api/stats/history?interval=hour&from=${new Date(firstTime).toISOString()}&to=${Math.floor(clock.getTime() / 1000)}`,
    );
    expect(before.points.some((p) => p.transactionCount > 0)).toBe(true);
    await reorgChain(chain.anvil.url, 1, [
      { tx: { request: swapExact(d, u[4]!, ["USDC", "WETH"], parseUnits("77", 6)) }, blockOffset: 0 },
      { tx: { request: tokenTransfer(d, "USDC", u[1]!, u[2]!, parseUnits("5", 6)) }, blockOffset: 0 },
    ]);
    const indexed = await pipeline.catchUp();
    await expectAllBucketsOnChain(indexed);
    const after = await get<HistoryBody>(
      `/api/stats/history?interval=hour&from=${new Date(firstTime).toISOString()}&to=${Math.floor(clock.getTime() / 1000)}`,
    );
    const lastBusy = (body: HistoryBody) => body.points.filter((p) => p.transactionCount > 0).at(-1);
    // anvil gives the replacement block its own time: the orphaned block's bucket lost its transactions.
    const orphanedBucket = lastBusy(before)!;
    expect(after.points.find((p) => p.time === orphanedBucket.time)).not.toEqual(orphanedBucket);
  });

  test("args: defaults, bad interval, from after to, too many buckets, unknown protocol", async () => {
    const body = await get<HistoryBody>("/api/stats/history");
    expect(body.interval).toBe("day");
    expect(body.points.length).toBeGreaterThanOrEqual(30);
    expect(body.points.length).toBeLessThanOrEqual(31);
    const hours = await get<HistoryBody>(
      "/api/protocol/demoswap/history?interval=hour&to=2026-01-03T00:00:00Z",
    );
    expect(hours.points).toHaveLength(49);
    expect(hours.points[0]!.time).toBe("2026-01-01T00:00:00.000Z");
    expect(hours.points.every((p) => p.transactionCount === 0 && p.volumeUsd === 0)).toBe(true);
    for (const [url, code, status] of [
      ["/api/stats/history?interval=week", "INVALID_PARAMETER", 400],
      ["/api/stats/history?from=2026-02-01&to=2026-01-01", "INVALID_PARAMETER", 400],
      [
        "/api/protocol/demoswap/history?interval=hour&from=2026-01-01&to=2026-03-01",
        "INVALID_PARAMETER",
        400,
      ],
      ["/api/protocol/demoswap/history?from=yesterday", "INVALID_PARAMETER", 400],
      ["/api/protocol/nope/history", "PROTOCOL_NOT_FOUND", 404],
    ] as const) {
      const response = await app.inject({ method: "GET", url });
      expect(response.statusCode, url).toBe(status);
      expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(response.json().code, url).toBe(code);
    }
  });
});
