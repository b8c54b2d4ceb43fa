import type { FastifyInstance } from "fastify";
import { formatUnits } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import {
  ADDRESS_TRANSFER_COLUMNS,
  HOLDER_COLUMNS,
  TOKEN_EVENT_COLUMNS,
  TRANSACTION_COLUMNS,
} from "../../src/api/routes/exports.ts";
import type { Config } from "../../src/config/schema.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { createJsonRpc } from "../../src/demo/demoClient.ts";
import type { PriceHistory } from "../../src/prices/createPriceHistory.ts";
import { type ExpectedTransaction, eip55, readExpectedTransactions } from "../helpers/chainActivity.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { parseCsv } from "../helpers/parseCsv.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

const HOUR = 3_600_000;

type TxJson = {
  txHash: string;
  blockNumber: number;
  blockTimestamp: string;
  fromAddress: string;
  toAddress: string | null;
  protocol: string;
  actionType: string;
  functionName: string;
  status: boolean;
  valueWei: string;
  gasUsed: string;
  gasPrice: string;
  valueUsd: number | null;
};
type EventJson = {
  txHash: string;
  logIndex: number;
  blockNumber: number;
  blockTimestamp: string;
  fromAddress: string;
  toAddress: string;
  amount: string;
  decimals: number;
};

/**
 * SPEC §10.4 on the demo chain: each file parses with a strict RFC 4180 parser, has exactly its columns, equals
 * its JSON endpoint row for row (oldest first), honours its filters, and its USD columns equal amount x the
 * price at block time; errors arrive as problem+json before any row.
 */
describe("CSV exports (SPEC §10.4)", () => {
  let chain: DemoChain;
  let config: Config;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let app: FastifyInstance;
  let small: FastifyInstance;
  let expected: ExpectedTransaction[];

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

  async function csv(url: string, instance = app) {
    const response = await instance.inject({ method: "GET", url });
    expect(response.statusCode, `${url}: ${response.body.slice(0, 300)}`).toBe(200);
    expect(response.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(response.headers["content-disposition"]).toMatch(/^attachment; filename="[\w.-]+\.csv"$/);
    return { ...parseCsv(response.body), disposition: String(response.headers["content-disposition"]) };
  }

  async function jsonPages<T>(url: string, key: string): Promise<T[]> {
    const all: T[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 1000; i++) {
      const sep = url.includes("?") ? "&" : "?";
      const response = await app.inject({
        method: "GET",
        url: `${url}${sep}limit=100${cursor ? `&cursor=${cursor}` : ""}`,
      });
      expect(response.statusCode, url).toBe(200);
      const body = response.json() as Record<string, unknown> & { nextCursor: string | null };
      all.push(...(body[key] as T[]));
      cursor = body.nextCursor;
      if (!cursor) return all;
    }
    throw new Error("test: too many pages");
  }

  beforeAll(async () => {
    chain = await setupDemoChain();
    config = chain.config;
    // Three rounds two hours apart: distinct block times, and prices that differ between them.
    const rpc = createJsonRpc(chain.anvil.url);
    for (let round = 0; round < 3; round++) {
      await rpc("evm_increaseTime", [2 * 3600]);
      await generateTransactions({
        rpcUrl: chain.anvil.url,
        deployment: chain.deployment,
        count: 20,
        perBlock: 4,
      });
    }
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config, database: db.database });
    const indexed = await pipeline.catchUp();
    expected = await readExpectedTransactions(chain.anvil.url, config, config.indexer.startBlock, indexed);
    const deps = {
      database: db.database,
      chain: pipeline.chain,
      indexerStatus: () => pipeline.indexer.status(),
      history: prices,
    };
    app = await buildApp(pipeline.common, deps);
    small = await buildApp(pipeline.common, { ...deps, exportMaxRows: 3 });
  });

  afterAll(async () => {
    await app?.close();
    await small?.close();
    await pipeline?.close();
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  /** SPEC §10.2's value of a transaction, from the chain's transfers and the price at block time. */
  function valueUsd(tx: ExpectedTransaction): number | null {
    const protocol = config.protocols.find((p) => p.id === tx.protocol)!;
    const own = new Set<string>([...protocol.contracts.map((c) => c.address), ...protocol.tvlAddresses]);
    const usd = tx.transfers.map((t) => {
      const token = config.tokens.find((x) => x.address === t.token)!;
      const price = priceOf(t.token, new Date(tx.timestamp));
      return price === null ? null : Number(formatUnits(t.amount, token.decimals)) * price;
    });
    if (!usd.some((u) => u !== null)) return null;
    let into = 0;
    let out = 0;
    let flow = false;
    tx.transfers.forEach((t, i) => {
      if (own.has(t.to)) {
        into += usd[i] ?? 0;
        flow = true;
      }
      if (own.has(t.from)) {
        out += usd[i] ?? 0;
        flow = true;
      }
    });
    return flow ? Math.max(into, out) : Math.max(...usd.map((u) => u ?? 0));
  }

  const num = (text: string | undefined) => (text === "" ? null : Number(text));

  test("default: an address's transactions equal endpoint 14, oldest first, with fee and USD value", async () => {
    const user = chain.deployment.users[0]!;
    const file = await csv(`/api/address/${user}/transactions.csv`);
    expect(file.header).toEqual([...TRANSACTION_COLUMNS]);
    expect(file.disposition).toBe(`attachment; filename="transactions-${eip55(user.toLowerCase())}.csv"`);
    const json = (await jsonPages<TxJson>(`/api/address/${user}/transactions`, "transactions")).reverse();
    expect(file.rows.length).toBeGreaterThan(5);
    expect(file.rows.map((r) => r.txHash)).toEqual(json.map((t) => t.txHash));
    const chainTxs = new Map(expected.map((t) => [t.hash, t]));
    file.rows.forEach((row, i) => {
      const t = json[i]!;
      expect(row).toMatchObject({
        blockNumber: String(t.blockNumber),
        blockTimestamp: t.blockTimestamp,
        fromAddress: t.fromAddress,
        toAddress: t.toAddress ?? "",
        protocol: t.protocol,
        actionType: t.actionType,
        functionName: t.functionName,
        status: String(t.status),
        valueWei: t.valueWei,
        gasUsed: t.gasUsed,
        gasPrice: t.gasPrice,
        feeWei: (BigInt(t.gasUsed) * BigInt(t.gasPrice)).toString(),
      });
      // The JSON endpoint's value at block time, to the last digit, and the chain's by the rule.
      expect(row.valueUsd, t.txHash).toBe(t.valueUsd === null ? "" : String(t.valueUsd));
      const want = valueUsd(chainTxs.get(t.txHash)!);
      if (want === null) expect(row.valueUsd, t.txHash).toBe("");
      else expect(num(row.valueUsd), t.txHash).toBeCloseTo(want, 9);
    });
    expect(file.rows.some((r) => Number(r.valueUsd) > 0)).toBe(true);
  });

  test("args: protocol and from/to (ISO and unix seconds, inclusive) filter the transactions", async () => {
    const user = chain.deployment.users[1]!;
    const all = (await csv(`/api/address/${user}/transactions.csv`)).rows;
    const swaps = await csv(`/api/address/${user}/transactions.csv?protocol=demoswap`);
    expect(swaps.rows).toEqual(all.filter((r) => r.protocol === "demoswap"));
    expect(swaps.rows.length).toBeGreaterThan(0);
    const times = [...new Set(all.map((r) => r.blockTimestamp))];
    expect(times.length).toBeGreaterThan(3);
    const [from, to] = [times[1]!, times.at(-2)!];
    const window = await csv(
      `/api/address/${user}/transactions.csv?from=${from}&to=${Math.floor(Date.parse(to) / 1000)}`,
    );
    expect(window.rows).toEqual(all.filter((r) => r.blockTimestamp! >= from && r.blockTimestamp! <= to));
    expect(window.rows.length).toBeLessThan(all.length);
  });

  test("default: an address's transfers, every tracked token, direction, exact decimals, price at block time", async () => {
    const user = chain.deployment.users[2]!.toLowerCase();
    const file = await csv(`/api/address/${user}/transfers.csv`);
    expect(file.header).toEqual([...ADDRESS_TRANSFER_COLUMNS]);
    const want = expected.flatMap((tx) =>
      tx.transfers
        .filter((t) => t.from === user || t.to === user)
        .map((t) => ({ tx, t, token: config.tokens.find((x) => x.address === t.token)! })),
    );
    expect(file.rows.length).toBe(want.length);
    expect(file.rows.length).toBeGreaterThan(5);
    file.rows.forEach((row, i) => {
      const { tx, t, token } = want[i]!;
      const price = priceOf(t.token, new Date(tx.timestamp));
      expect(row).toMatchObject({
        txHash: tx.hash,
        blockNumber: String(tx.blockNumber),
        blockTimestamp: new Date(tx.timestamp).toISOString(),
        tokenAddress: eip55(t.token),
        tokenSymbol: token.symbol,
        fromAddress: eip55(t.from),
        toAddress: eip55(t.to),
        direction: t.from === user && t.to === user ? "self" : t.from === user ? "out" : "in",
        amount: t.amount.toString(),
        decimals: String(token.decimals),
        amountDecimal: formatUnits(t.amount, token.decimals),
        priceUsd: price === null ? "" : String(price),
      });
      expect(row.amountDecimal).not.toMatch(/e/i);
      if (price === null) expect(row.valueUsd).toBe("");
      else expect(num(row.valueUsd)).toBeCloseTo(Number(formatUnits(t.amount, token.decimals)) * price, 9);
    });
    const usdc = config.tokens.find((t) => t.symbol === "USDC")!.address;
    const only = await csv(
      `/api/address/${user}/transfers.csv?token=${usdc.toUpperCase().replace("0X", "0x")}`,
    );
    expect(only.rows).toEqual(file.rows.filter((r) => r.tokenAddress!.toLowerCase() === usdc));
  });

  test("default: a token's events equal endpoint 4, with its filters", async () => {
    const demo = config.tokens.find((t) => t.symbol === "DEMO")!;
    const file = await csv(`/api/tokens/${demo.address}/events.csv`);
    expect(file.header).toEqual([...TOKEN_EVENT_COLUMNS]);
    const json = (await jsonPages<EventJson>(`/api/tokens/${demo.address}/events`, "events")).reverse();
    expect(file.rows.length).toBe(json.length);
    file.rows.forEach((row, i) => {
      const e = json[i]!;
      const price = priceOf(demo.address, new Date(e.blockTimestamp));
      expect(row).toEqual({
        txHash: e.txHash,
        logIndex: String(e.logIndex),
        blockNumber: String(e.blockNumber),
        blockTimestamp: e.blockTimestamp,
        fromAddress: e.fromAddress,
        toAddress: e.toAddress,
        amount: e.amount,
        decimals: String(e.decimals),
        amountDecimal: formatUnits(BigInt(e.amount), e.decimals),
        priceUsd: String(price),
        valueUsd: row.valueUsd,
      });
      expect(Number(row.valueUsd)).toBeCloseTo(Number(formatUnits(BigInt(e.amount), e.decimals)) * price!, 9);
    });
    const party = chain.deployment.users[3]!;
    const mid = json[Math.floor(json.length / 2)]!.blockNumber;
    const filtered = `address=${party}&fromBlock=${mid}&toBlock=${mid + 5}`;
    const narrow = await csv(`/api/tokens/${demo.address}/events.csv?${filtered}`);
    const narrowJson = (
      await jsonPages<EventJson>(`/api/tokens/${demo.address}/events?${filtered}`, "events")
    ).reverse();
    expect(narrow.rows.map((r) => `${r.txHash}:${r.logIndex}`)).toEqual(
      narrowJson.map((e) => `${e.txHash}:${e.logIndex}`),
    );
  });

  test("default: a token's holders equal the holders list, by rank", async () => {
    const demo = config.tokens.find((t) => t.symbol === "DEMO")!;
    const file = await csv(`/api/tokens/${demo.address}/holders.csv`);
    expect(file.header).toEqual([...HOLDER_COLUMNS]);
    const response = await app.inject({
      method: "GET",
      url: `/api/tokens/${demo.address}/holders?limit=100`,
    });
    const json = response.json() as {
      holders: { rank: number; address: string; balance: string; share: number }[];
    };
    expect(file.rows.length).toBe(json.holders.length);
    expect(file.rows.length).toBeGreaterThan(3);
    file.rows.forEach((row, i) => {
      const h = json.holders[i]!;
      expect(row).toEqual({
        rank: String(h.rank),
        address: h.address,
        balance: h.balance,
        balanceDecimal: formatUnits(BigInt(h.balance), demo.decimals),
        share: String(h.share),
      });
    });
  });

  test("error: problem+json before any row: row limit, bad times, from after to, untracked token, unknown protocol", async () => {
    const user = chain.deployment.users[0]!;
    const demo = config.tokens.find((t) => t.symbol === "DEMO")!.address;
    const cases: [FastifyInstance, string, number, string][] = [
      [small, `/api/address/${user}/transactions.csv`, 400, "INVALID_PARAMETER"],
      [small, `/api/address/${user}/transfers.csv`, 400, "INVALID_PARAMETER"],
      [small, `/api/tokens/${demo}/events.csv`, 400, "INVALID_PARAMETER"],
      [small, `/api/tokens/${demo}/holders.csv`, 400, "INVALID_PARAMETER"],
      [app, `/api/address/${user}/transactions.csv?from=yesterday`, 400, "INVALID_PARAMETER"],
      [app, `/api/address/${user}/transfers.csv?from=2026-02-01&to=2026-01-01`, 400, "INVALID_PARAMETER"],
      [app, `/api/tokens/${demo}/events.csv?fromBlock=9&toBlock=3`, 400, "INVALID_PARAMETER"],
      [app, `/api/address/${user}/transfers.csv?token=0x${"12".repeat(20)}`, 404, "TOKEN_NOT_TRACKED"],
      [app, `/api/tokens/0x${"12".repeat(20)}/holders.csv`, 404, "TOKEN_NOT_TRACKED"],
      [app, `/api/address/${user}/transactions.csv?protocol=nope`, 404, "PROTOCOL_NOT_FOUND"],
      [app, "/api/address/0x12/transactions.csv", 400, "INVALID_ADDRESS"],
    ];
    for (const [instance, url, status, code] of cases) {
      const response = await instance.inject({ method: "GET", url });
      expect(response.statusCode, url).toBe(status);
      expect(response.headers["content-type"], url).toMatch(/^application\/problem\+json/);
      expect(response.json().code, url).toBe(code);
    }
    // Within the limit, the small app serves: a narrow range of one token's events.
    const one = await csv(
      `/api/tokens/${demo}/events.csv?fromBlock=0&toBlock=${config.indexer.startBlock + 1}`,
      small,
    );
    expect(one.rows.length).toBeLessThanOrEqual(3);
  });

  test("edge: a range with no stored block is a file with only its header", async () => {
    const user = chain.deployment.users[0]!;
    const file = await csv(`/api/address/${user}/transactions.csv?from=2001-01-01&to=2001-01-02`);
    expect(file.rows).toEqual([]);
    expect(file.header).toEqual([...TRANSACTION_COLUMNS]);
  });
});
