import type { FastifyInstance } from "fastify";
import {
  createPublicClient,
  createWalletClient,
  erc20Abi,
  getAddress,
  http,
  type PublicClient,
  parseAbiItem,
  parseUnits,
} from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { createTotalSupplyReader } from "../../src/api/createTotalSupplyReader.ts";
import { type ChainClient, createChainClient } from "../../src/chain/createChainClient.ts";
import type { Address, Config, TokenConfig } from "../../src/config/schema.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { prices } from "../../src/store/schema.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { type RpcProxy, startRpcProxy } from "../helpers/rpcProxy.ts";

const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");
const ZERO = "0x0000000000000000000000000000000000000000";
const UNTRACKED = "0x00000000000000000000000000000000000000AA";

type Event = {
  txHash: string;
  logIndex: number;
  blockNumber: number;
  blockTimestamp: string;
  tokenAddress: string;
  tokenSymbol: string;
  fromAddress: string;
  toAddress: string;
  amount: string;
  decimals: number;
};
type Holder = { rank: number; address: string; balance: string; share: number };

let chain: DemoChain;
let config: Config;
let client: PublicClient;
let db: TestDatabase;
let pipeline: TestPipeline;
let proxy: RpcProxy;
let appChain: ChainClient;
let app: FastifyInstance;
let selfTransferHash: string;

const tokenOf = (symbol: string): TokenConfig => config.tokens.find((t) => t.symbol === symbol)!;
const get = (url: string) => app.inject({ method: "GET", url });

beforeAll(async () => {
  chain = await setupDemoChain();
  config = chain.config;
  client = createPublicClient({ transport: http(chain.anvil.url) }) as PublicClient;
  const { deployment } = chain;
  await generateTransactions({ rpcUrl: chain.anvil.url, deployment, count: 40, perBlock: 5 });
  // A self-transfer (both party indexes find it: the party filter must list it once), and a new holder.
  const wallet = createWalletClient({ transport: http(chain.anvil.url) });
  const user = deployment.users[0]!;
  const demo = deployment.tokens.DEMO.address;
  selfTransferHash = await wallet.writeContract({
    account: user,
    chain: null,
    address: demo,
    abi: erc20Abi,
    functionName: "transfer",
    args: [user, parseUnits("7", 18)],
  });
  await client.waitForTransactionReceipt({ hash: selfTransferHash as `0x${string}` });
  const fresh = await wallet.writeContract({
    account: user,
    chain: null,
    address: demo,
    abi: erc20Abi,
    functionName: "transfer",
    args: ["0x000000000000000000000000000000000000bEEF", parseUnits("3", 18)],
  });
  await client.waitForTransactionReceipt({ hash: fresh });

  db = await createTestDatabase();
  pipeline = await createTestPipeline({ config, database: db.database });
  await pipeline.catchUp();
  // The API reads the node through a fault-injecting proxy, failing fast (no retries) when told to.
  proxy = await startRpcProxy({ upstream: chain.anvil.url });
  const appCommon = { ...pipeline.common, config: { ...config, rpc: { ...config.rpc, urls: [proxy.url] } } };
  appChain = createChainClient(appCommon, { maxRetries: 0, baseDelayMs: 5, maxDelayMs: 10 });
  app = await buildApp(pipeline.common, {
    database: db.database,
    chain: appChain,
    indexerStatus: pipeline.indexer.status,
  });
});

afterAll(async () => {
  await app?.close();
  appChain?.close();
  await proxy?.close();
  await pipeline?.close();
  await db?.cleanup();
  await chain?.anvil.stop();
});

/** Every Transfer log of `token` on the chain, newest first, as the API must list them. */
async function chainEvents(token: TokenConfig): Promise<Event[]> {
  const logs = await client.getLogs({
    address: token.address,
    event: TRANSFER,
    fromBlock: BigInt(chain.deployment.startBlock),
    toBlock: "latest",
  });
  const times = new Map<bigint, string>();
  for (const n of new Set(logs.map((l) => l.blockNumber))) {
    const block = await client.getBlock({ blockNumber: n });
    times.set(n, new Date(Number(block.timestamp) * 1000).toISOString());
  }
  return logs
    .map((l) => ({
      txHash: l.transactionHash.toLowerCase(),
      logIndex: l.logIndex,
      blockNumber: Number(l.blockNumber),
      blockTimestamp: times.get(l.blockNumber)!,
      tokenAddress: getAddress(token.address),
      tokenSymbol: token.symbol,
      fromAddress: getAddress(l.args.from!),
      toAddress: getAddress(l.args.to!),
      amount: l.args.value!.toString(),
      decimals: token.decimals,
    }))
    .sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex);
}

/** Holders with a non-zero `balanceOf` among every party of the token's transfers, largest first. */
async function chainHolders(token: TokenConfig, events: readonly Event[]) {
  const parties = new Set(events.flatMap((e) => [e.fromAddress, e.toAddress]).filter((a) => a !== ZERO));
  const holders = await Promise.all(
    [...parties].map(async (address) => ({
      address,
      balance: await client.readContract({
        address: token.address,
        abi: erc20Abi,
        functionName: "balanceOf",
        args: [address as Address],
      }),
    })),
  );
  return holders
    .filter((h) => h.balance > 0n)
    .sort((a, b) =>
      a.balance === b.balance
        ? a.address.toLowerCase() < b.address.toLowerCase()
          ? -1
          : 1
        : a.balance > b.balance
          ? -1
          : 1,
    );
}

/** Follow `nextCursor` from the first page until it is null. */
async function allByCursor(url: string, limit: number): Promise<{ events: Event[]; pages: number }> {
  const events: Event[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = url.includes("?") ? "&" : "?";
    const response = await get(`${url}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(response.statusCode).toBe(200);
    const body = response.json() as { events: Event[]; nextCursor: string | null };
    events.push(...body.events);
    if (body.nextCursor !== null) expect(body.events).toHaveLength(limit);
    cursor = body.nextCursor;
    pages++;
  } while (cursor !== null && pages < 1000);
  return { events, pages };
}

async function expectProblem(url: string, status: number, code: string, detail: RegExp) {
  const response = await get(url);
  expect(response.statusCode, url).toBe(status);
  expect(response.headers["content-type"]).toContain("application/problem+json");
  const body = response.json();
  expect(body).toMatchObject({ type: `/docs/errors#${code}`, status, code });
  expect(body.detail, url).toMatch(detail);
}

describe("GET /api/tokens", () => {
  test("default: the config's tokens, seed fields exactly, EIP-55, config order", async () => {
    const response = await get("/api/tokens");
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      tokens: config.tokens.map((t) => ({
        symbol: t.symbol,
        name: t.name,
        address: getAddress(t.address),
        decimals: t.decimals,
        protocol: t.protocol,
        color: t.color,
        logo: t.logo,
        official: t.official,
      })),
    });
    expect(response.json().tokens.map((t: { symbol: string }) => t.symbol)).toEqual([
      "DEMO",
      "USDC",
      "WETH",
      "RWD",
    ]);
  });
});

describe("GET /api/tokens/:address", () => {
  test("default: DEMO matches the chain (supply, holders, transfers) with any case in", async () => {
    const demo = tokenOf("DEMO");
    const events = await chainEvents(demo);
    const holders = await chainHolders(demo, events);
    const supply = await client.readContract({
      address: demo.address,
      abi: erc20Abi,
      functionName: "totalSupply",
    });
    const upper = `0x${demo.address.slice(2).toUpperCase()}`;
    const response = await get(`/api/tokens/${upper}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      symbol: "DEMO",
      name: demo.name,
      address: getAddress(demo.address),
      decimals: 18,
      protocol: "demoswap",
      color: "#ff6600",
      logo: "",
      official: true,
      // From the DEMO/USDC pool (SPEC §6 tier dex); the price itself is checked in usdStats.test.ts.
      priceUsd: expect.any(Number),
      priceSource: "dex",
      priceUpdatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      totalSupply: supply.toString(),
      holdersCount: holders.length,
      transfersCount: events.length,
    });
    expect(events.length).toBeGreaterThan(20);
  });

  test("default: a price another process stored, with its tier and time", async () => {
    const usdc = tokenOf("USDC");
    const at = new Date("2026-11-21T08:00:00.123Z");
    await db.database.db
      .insert(prices)
      .values({ tokenAddress: usdc.address, priceUsd: 0.9998, source: "api", priceAt: at })
      .onConflictDoUpdate({
        target: prices.tokenAddress,
        set: { priceUsd: 0.9998, source: "api", priceAt: at, fetchedAt: new Date() },
      });
    // A replica whose price engine has not looked USDC up yet takes the stored price (fresh: just fetched).
    const replica = await buildApp(pipeline.common, { database: db.database, chain: appChain });
    const body = (await replica.inject({ method: "GET", url: `/api/tokens/${usdc.address}` })).json();
    await replica.close();
    expect(body).toMatchObject({
      priceUsd: 0.9998,
      priceSource: "api",
      priceUpdatedAt: "2026-11-21T08:00:00.123Z",
    });
    expect(body.transfersCount).toBe((await chainEvents(usdc)).length);
  });

  test("error: malformed address is 400 INVALID_ADDRESS, untracked is 404 TOKEN_NOT_TRACKED", async () => {
    for (const suffix of ["", "/holders", "/events"]) {
      await expectProblem(`/api/tokens/0x1234${suffix}`, 400, "INVALID_ADDRESS", /^address: /);
      await expectProblem(`/api/tokens/${"g".repeat(42)}${suffix}`, 400, "INVALID_ADDRESS", /^address: /);
      await expectProblem(
        `/api/tokens/${UNTRACKED.toLowerCase()}${suffix}`,
        404,
        "TOKEN_NOT_TRACKED",
        new RegExp(`^${getAddress(UNTRACKED)} is not a tracked token`),
      );
    }
  });
});

describe("GET /api/tokens/:address/holders", () => {
  test("default: every tracked token's holders equal balanceOf, paged disjoint and complete", async () => {
    for (const token of config.tokens) {
      const supply = await client.readContract({
        address: token.address,
        abi: erc20Abi,
        functionName: "totalSupply",
      });
      const pages: Holder[][] = [];
      let total = -1;
      for (let offset = 0; offset <= 200; offset += 3) {
        const response = await get(`/api/tokens/${token.address}/holders?limit=3&offset=${offset}`);
        expect(response.statusCode).toBe(200);
        const body = response.json();
        expect(body).toMatchObject({ token: getAddress(token.address), limit: 3, offset });
        total = body.total;
        pages.push(body.holders);
        if (body.holders.length < 3) break;
      }
      const listed = pages.flat();
      expect(listed.map((h) => h.rank)).toEqual(listed.map((_, i) => i + 1));
      expect(new Set(listed.map((h) => h.address)).size).toBe(listed.length);
      expect(total).toBe(listed.length);
      for (const h of listed) {
        const onChain = await client.readContract({
          address: token.address,
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [h.address as Address],
        });
        expect(h).toEqual({
          rank: h.rank,
          address: getAddress(h.address),
          balance: onChain.toString(),
          share: Number(onChain) / Number(supply),
        });
        expect(onChain).toBeGreaterThan(0n);
      }
      const order = listed.map((h) => [BigInt(h.balance), h.address.toLowerCase()] as const);
      for (let i = 1; i < order.length; i++) {
        const [b0, a0] = order[i - 1]!;
        const [b1, a1] = order[i]!;
        expect(b0 > b1 || (b0 === b1 && a0 < a1)).toBe(true);
      }
      if (token.exclusive) {
        // Its whole history is indexed: the list is exactly the chain's holders.
        const expected = await chainHolders(token, await chainEvents(token));
        expect(listed.map((h) => [h.address, h.balance])).toEqual(
          expected.map((h) => [h.address, h.balance.toString()]),
        );
      }
    }
  });

  test("args: defaults are limit 25 and offset 0; an offset past the end is an empty page", async () => {
    const demo = tokenOf("DEMO");
    const body = (await get(`/api/tokens/${demo.address}/holders`)).json();
    expect(body).toMatchObject({ limit: 25, offset: 0 });
    expect(body.holders.length).toBe(Math.min(25, body.total));
    const far = (await get(`/api/tokens/${demo.address}/holders?offset=10000`)).json();
    expect(far).toMatchObject({ holders: [], total: body.total, offset: 10000 });
  });

  test("error: limit and offset out of range are 400 INVALID_PARAMETER naming them", async () => {
    const base = `/api/tokens/${tokenOf("DEMO").address}/holders`;
    for (const bad of ["0", "-1", "abc", "2.5", "101", "1000", ""]) {
      await expectProblem(`${base}?limit=${bad}`, 400, "INVALID_PARAMETER", /^limit: /);
    }
    for (const bad of ["-1", "10001", "x", "1.5"]) {
      await expectProblem(`${base}?offset=${bad}`, 400, "INVALID_PARAMETER", /^offset: /);
    }
    await expectProblem(`${base}?cursor=abc`, 400, "INVALID_PARAMETER", /^(querystring|cursor): /);
  });
});

describe("GET /api/tokens/:address/events", () => {
  test("default: DEMO events equal its Transfer logs, newest first, by cursor and by offset", async () => {
    const demo = tokenOf("DEMO");
    const expected = await chainEvents(demo);
    const base = `/api/tokens/${demo.address}/events`;
    const byCursor = await allByCursor(base, 7);
    expect(byCursor.events).toEqual(expected);
    expect(byCursor.pages).toBe(Math.ceil(expected.length / 7) + (expected.length % 7 === 0 ? 1 : 0));

    const byOffset: Event[] = [];
    for (let offset = 0; offset < expected.length + 7; offset += 7) {
      const body = (await get(`${base}?limit=7&offset=${offset}`)).json();
      expect(body.token).toBe(getAddress(demo.address));
      byOffset.push(...body.events);
    }
    expect(byOffset).toEqual(expected);
    expect(new Set(byOffset.map((e) => `${e.txHash}:${e.logIndex}`)).size).toBe(expected.length);

    const first = (await get(base)).json();
    expect(first.events).toEqual(expected.slice(0, 25));
    expect(typeof first.nextCursor).toBe("string");
  });

  test("default: events of a token scanned only through protocol transactions are those transactions' logs", async () => {
    const weth = tokenOf("WETH");
    expect(weth.exclusive).toBe(false);
    const stored = new Set(
      pipeline.events.flatMap((e) => (e.type === "transaction" ? [e.transaction.hash.toLowerCase()] : [])),
    );
    const expected = (await chainEvents(weth)).filter((e) => stored.has(e.txHash));
    expect(expected.length).toBeGreaterThan(0);
    expect((await allByCursor(`/api/tokens/${weth.address}/events`, 4)).events).toEqual(expected);
  });

  test("args: address filters sender or receiver (any case; a self-transfer once)", async () => {
    const demo = tokenOf("DEMO");
    const user = getAddress(chain.deployment.users[0]!);
    const expected = (await chainEvents(demo)).filter((e) => e.fromAddress === user || e.toAddress === user);
    expect(expected.filter((e) => e.txHash === selfTransferHash.toLowerCase())).toHaveLength(1);
    const url = `/api/tokens/${demo.address}/events?address=${user.toLowerCase()}`;
    expect((await allByCursor(url, 3)).events).toEqual(expected);
    const offsetPage = (await get(`${url}&limit=3&offset=3`)).json();
    expect(offsetPage.events).toEqual(expected.slice(3, 6));
    const nobody = (await get(`/api/tokens/${demo.address}/events?address=${UNTRACKED}`)).json();
    expect(nobody).toEqual({ token: getAddress(demo.address), events: [], nextCursor: null });
  });

  test("args: fromBlock and toBlock bound the range, inclusive", async () => {
    const demo = tokenOf("DEMO");
    const all = await chainEvents(demo);
    const blocks = [...new Set(all.map((e) => e.blockNumber))].sort((a, b) => a - b);
    const from = blocks[1]!;
    const to = blocks[blocks.length - 2]!;
    const expected = all.filter((e) => e.blockNumber >= from && e.blockNumber <= to);
    const url = `/api/tokens/${demo.address}/events?fromBlock=${from}&toBlock=${to}`;
    expect((await allByCursor(url, 5)).events).toEqual(expected);
    const user = getAddress(chain.deployment.users[1]!);
    const both = (await allByCursor(`${url}&address=${user}`, 2)).events;
    expect(both).toEqual(expected.filter((e) => e.fromAddress === user || e.toAddress === user));
    const one = (await get(`/api/tokens/${demo.address}/events?fromBlock=${from}&toBlock=${from}`)).json();
    expect(one.events).toEqual(all.filter((e) => e.blockNumber === from));
  });

  test("error: bad limit, offset, cursor, block range and address filter are 400 naming the parameter", async () => {
    const base = `/api/tokens/${tokenOf("DEMO").address}/events`;
    for (const bad of ["0", "-1", "abc", "2.5", "101", "1000"]) {
      await expectProblem(`${base}?limit=${bad}`, 400, "INVALID_PARAMETER", /^limit: /);
    }
    await expectProblem(`${base}?offset=10001`, 400, "INVALID_PARAMETER", /^offset: /);
    await expectProblem(`${base}?offset=-1`, 400, "INVALID_PARAMETER", /^offset: /);
    for (const bad of [
      "garbage",
      Buffer.from("v2:1:1").toString("base64url"),
      `${"A".repeat(65)}`,
      "%00",
      "v1:1:1",
    ]) {
      await expectProblem(`${base}?cursor=${bad}`, 400, "INVALID_PARAMETER", /^cursor: /);
    }
    const { nextCursor } = (await get(`${base}?limit=2`)).json();
    await expectProblem(
      `${base}?cursor=${nextCursor}&offset=0`,
      400,
      "INVALID_PARAMETER",
      /^cursor: .*offset/,
    );
    await expectProblem(`${base}?fromBlock=9&toBlock=8`, 400, "INVALID_PARAMETER", /^fromBlock: /);
    await expectProblem(`${base}?fromBlock=abc`, 400, "INVALID_PARAMETER", /^fromBlock: /);
    await expectProblem(`${base}?toBlock=-5`, 400, "INVALID_PARAMETER", /^toBlock: /);
    await expectProblem(`${base}?address=0x12`, 400, "INVALID_ADDRESS", /^address: /);
    await expectProblem(`${base}?unknown=1`, 400, "INVALID_PARAMETER", /^(querystring|unknown): /);
  });

  test("behavior: a cursor page stays stable while new transfers arrive", async () => {
    const demo = tokenOf("DEMO");
    const base = `/api/tokens/${demo.address}/events`;
    const before = await chainEvents(demo);
    const page1 = (await get(`${base}?limit=5`)).json();
    expect(page1.events).toEqual(before.slice(0, 5));

    await generateTransactions({
      rpcUrl: chain.anvil.url,
      deployment: chain.deployment,
      count: 10,
      perBlock: 5,
    });
    await pipeline.catchUp();
    const after = await chainEvents(demo);
    expect(after.length).toBeGreaterThan(before.length);

    // The cursor continues right after page 1's last event, ignoring what arrived since.
    const rest = (await allByCursor(`${base}?cursor=${page1.nextCursor}`, 100)).events;
    expect([...page1.events, ...rest]).toEqual(before);
    // The counters followed the new transfers.
    const detail = (await get(`/api/tokens/${demo.address}`)).json();
    expect(detail.transfersCount).toBe(after.length);
    expect(detail.holdersCount).toBe((await chainHolders(demo, after)).length);
  });
});

describe("totalSupply from the node", () => {
  test("error: a node failure before any read is 503 UPSTREAM_UNAVAILABLE; a cached value is still served", async () => {
    const demo = tokenOf("DEMO");
    const rwd = tokenOf("RWD");
    // A fresh app: nothing read yet.
    const fresh = await buildApp(pipeline.common, { database: db.database, chain: appChain });
    const get = (url: string) => fresh.inject({ method: "GET", url });
    const expectProblem = async (url: string, status: number, code: string, detail: RegExp) => {
      const response = await get(url);
      expect(response.statusCode, url).toBe(status);
      expect(response.headers["content-type"]).toContain("application/problem+json");
      expect(response.json()).toMatchObject({ type: `/docs/errors#${code}`, status, code });
      expect(response.json().detail).toMatch(detail);
    };
    const demoBefore = (await get(`/api/tokens/${demo.address}`)).json();
    proxy.inject({ kind: "http", status: 503, method: "eth_call" });
    try {
      await expectProblem(`/api/tokens/${rwd.address}`, 503, "UPSTREAM_UNAVAILABLE", /totalSupply\(\)/);
      await expectProblem(`/api/tokens/${rwd.address}/holders`, 503, "UPSTREAM_UNAVAILABLE", /totalSupply/);
      const response = await get(`/api/tokens/${demo.address}`);
      expect(response.statusCode).toBe(200);
      expect(response.json().totalSupply).toBe(demoBefore.totalSupply);
      expect(JSON.stringify((await get(`/api/tokens/${rwd.address}`)).json())).not.toContain(proxy.url);
    } finally {
      proxy.clearFaults();
    }
    const rwdSupply = await client.readContract({
      address: rwd.address,
      abi: erc20Abi,
      functionName: "totalSupply",
    });
    expect((await get(`/api/tokens/${rwd.address}`)).json().totalSupply).toBe(rwdSupply.toString());
    await fresh.close();
  });

  test("behavior: one eth_call per token per TTL, the last value after a failure or a timeout", async () => {
    const demo = tokenOf("DEMO");
    let clock = 1_000_000;
    const reader = createTotalSupplyReader(
      { chain: appChain, logger: pipeline.common.logger },
      { ttlMs: 15_000, timeoutMs: 300, now: () => clock },
    );
    const supply = await client.readContract({
      address: demo.address,
      abi: erc20Abi,
      functionName: "totalSupply",
    });
    proxy.resetCounts();
    const burst = await Promise.all(Array.from({ length: 10 }, () => reader.get(demo.address)));
    expect(burst).toEqual(Array(10).fill(supply));
    expect(proxy.counts.eth_call).toBe(1);
    clock += 14_999;
    expect(await reader.get(demo.address)).toBe(supply);
    expect(proxy.counts.eth_call).toBe(1);

    clock += 2;
    proxy.inject({ kind: "http", status: 503, method: "eth_call" });
    expect(await reader.get(demo.address)).toBe(supply);
    expect(proxy.counts.eth_call).toBe(2);
    proxy.clearFaults();

    proxy.inject({ kind: "timeout", method: "eth_call", times: 1 });
    const started = Date.now();
    expect(await reader.get(demo.address)).toBe(supply);
    expect(Date.now() - started).toBeLessThan(3_000);
    proxy.clearFaults();
  });
});
