import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import type { Config } from "../config/schema.ts";
import { createLogger } from "../internal/logger.ts";
import { type PriceServer, startPriceServer } from "./_test/priceServer.ts";
import { createApiTier } from "./createApiTier.ts";

const KEY = "alcht_SECRETkey0123456789abcdef";
const NOW = new Date("2026-11-21T08:00:00.000Z");
const token = (i: number) => `0x${(0x1000 + i).toString(16).padStart(40, "0")}`;

let server: PriceServer;
beforeAll(async () => {
  server = await startPriceServer({ apiKey: KEY });
});
afterAll(() => server.close());
beforeEach(() => {
  server.quotes.clear();
  server.requests.length = 0;
  server.down = false;
});

function configWith(api: Config["prices"]["api"], chainId = 1): Config {
  const config = testConfig({ urls: ["http://127.0.0.1:8545"] }, chainId);
  return { ...config, prices: { cacheSeconds: 300, ...(api ? { api } : {}) } };
}

function tierOf(api: Config["prices"]["api"], chainId = 1) {
  const lines: string[] = [];
  const logger = createLogger({ level: "debug", destination: { write: (line: string) => lines.push(line) } });
  const tier = createApiTier(testCommon(configWith(api, chainId), logger), { now: () => NOW });
  return { tier, lines };
}

describe("alchemy", () => {
  const alchemy = { kind: "alchemy" as const, apiKey: KEY, baseUrl: "" };

  test("default: prices with tier api and the provider's time", async () => {
    server.set(token(1), { usd: 2.5, at: new Date(NOW.getTime() - 60_000) });
    const { tier } = tierOf({ ...alchemy, baseUrl: server.url });
    expect(tier?.provider).toBe("alchemy");
    expect(await tier!.lookup([token(1), token(2)])).toEqual(
      new Map([[token(1), { usd: 2.5, source: "api", at: new Date(NOW.getTime() - 60_000) }]]),
    );
    // chain id 1 and no configured network: Alchemy's name for it.
    expect(server.requests).toHaveLength(1);
  });

  test("behavior: 30 tokens are 2 calls of 25 and 5", async () => {
    const tokens = Array.from({ length: 30 }, (_, i) => token(i));
    for (const t of tokens) server.set(t, { usd: 1, at: NOW });
    const { tier } = tierOf({ ...alchemy, baseUrl: server.url });
    const prices = await tier!.lookup(tokens);
    expect(prices.size).toBe(30);
    expect(server.requests.map((r) => r.tokens.length).sort((a, b) => a - b)).toEqual([5, 25]);
    expect(new Set(server.requests.flatMap((r) => r.tokens))).toEqual(new Set(tokens));
  });

  test("behavior: a price older than 1 hour or not positive is refused", async () => {
    server.set(token(1), { usd: 2, at: new Date(NOW.getTime() - 3_600_001) });
    server.set(token(2), { usd: 2, at: new Date(NOW.getTime() - 3_600_000) });
    server.set(token(3), { usd: 0, at: NOW });
    server.set(token(4), { usd: -1, at: NOW });
    const { tier } = tierOf({ ...alchemy, baseUrl: server.url });
    expect([...(await tier!.lookup([token(1), token(2), token(3), token(4)])).keys()]).toEqual([token(2)]);
  });

  test("behavior: a failing call prices nothing, throws nothing and logs no key", async () => {
    server.down = true;
    const { tier, lines } = tierOf({ ...alchemy, baseUrl: server.url });
    expect(await tier!.lookup([token(1)])).toEqual(new Map());
    const failed = await createApiTier(
      testCommon(configWith({ ...alchemy, baseUrl: "http://127.0.0.1:1" })),
      { now: () => NOW },
    )!.lookup([token(1)]);
    expect(failed.size).toBe(0);
    expect(lines.join("")).toContain("price API call failed");
    expect(lines.join("")).toContain("HTTP 500");
    expect(lines.join("")).not.toContain(KEY);
  });

  test("args: no apiKey, or no network for the chain, disables the tier with a warning", () => {
    const noKey = tierOf({ kind: "alchemy", baseUrl: server.url });
    expect(noKey.tier).toBeNull();
    expect(noKey.lines.join("")).toContain("Alchemy price API disabled");
    expect(tierOf({ ...alchemy, baseUrl: server.url }, 31337).tier).toBeNull();
    expect(tierOf({ ...alchemy, baseUrl: server.url, network: "eth-mainnet" }, 31337).tier).not.toBeNull();
    expect(tierOf(undefined).tier).toBeNull();
  });
});

describe("defillama", () => {
  test("default: chain prefix from the chain id, confidence and age checked", async () => {
    server.set(token(1), { usd: 3000, at: NOW, confidence: 0.99 });
    server.set(token(2), { usd: 1, at: NOW, confidence: 0.2 });
    server.set(token(3), { usd: 1, at: new Date(NOW.getTime() - 2 * 3_600_000) });
    const { tier } = tierOf({ kind: "defillama", baseUrl: server.url }, 8453);
    const prices = await tier!.lookup([token(1), token(2), token(3)]);
    expect(prices).toEqual(new Map([[token(1), { usd: 3000, source: "api", at: NOW }]]));
    expect(server.requests[0]?.path).toBe(
      `/prices/current/base:${token(1)},base:${token(2)},base:${token(3)}`,
    );
  });

  test("args: prices.api.network overrides the chain prefix; 30 tokens are one call", async () => {
    const tokens = Array.from({ length: 30 }, (_, i) => token(i));
    const { tier } = tierOf({ kind: "defillama", baseUrl: server.url, network: "arbitrum" }, 31337);
    await tier!.lookup(tokens);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.path.startsWith("/prices/current/arbitrum:")).toBe(true);
  });
});
