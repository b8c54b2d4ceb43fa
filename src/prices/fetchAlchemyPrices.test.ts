import { afterAll, beforeAll, beforeEach, expect, test } from "vitest";
import { type PriceServer, startPriceServer } from "./_test/priceServer.ts";
import { PriceApiError } from "./errors.ts";
import { fetchAlchemyPrices } from "./fetchAlchemyPrices.ts";

const KEY = "alcht_SECRETkey0123456789abcdef";
const A = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
const B = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2";
const C = "0x6b175474e89094c44da98b954eedeac495271d0f";

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

const call = (addresses: string[], apiKey = KEY) =>
  fetchAlchemyPrices({ baseUrl: `${server.url}/`, apiKey, network: "eth-mainnet", addresses });

test("default: one POST for every address, values and times as Alchemy states them", async () => {
  const at = new Date("2026-11-21T08:00:00.000Z");
  server.set(A, { usd: 0.9998, at });
  server.set(B, { usd: 3012.5, at });
  const result = await call([A, B]);
  expect(result.quotes).toEqual(
    new Map([
      [A, { usd: 0.9998, at }],
      [B.toLowerCase(), { usd: 3012.5, at }],
    ]),
  );
  expect(result.errors.size).toBe(0);
  expect(server.requests).toEqual([
    { provider: "alchemy", path: `/prices/v1/${KEY}/tokens/by-address`, tokens: [A, B.toLowerCase()] },
  ]);
});

test("behavior: an entry with an error is reported and left out, the others are kept", async () => {
  server.set(A, { usd: 1 });
  server.set(B, { usd: 5, error: "Token not supported" });
  const result = await call([A, B, C]);
  expect([...result.quotes.keys()]).toEqual([A]);
  expect(result.errors).toEqual(
    new Map([
      [B.toLowerCase(), "Token not supported"],
      [C, "Token not found"],
    ]),
  );
});

test("error: a non-2xx answer is a PriceApiError naming the status, never the key", async () => {
  server.down = true;
  const error = await call([A]).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PriceApiError);
  expect((error as Error).message).toBe("Alchemy price API answered HTTP 500");
  server.down = false;
  const wrongKey = await call([A], "alcht_WRONGkey0123456789").catch((e: unknown) => e);
  expect((wrongKey as Error).message).toBe("Alchemy price API answered HTTP 401");
});

test("error: an unreachable API is a PriceApiError without the URL or the key", async () => {
  const error = await fetchAlchemyPrices({
    baseUrl: "http://127.0.0.1:1",
    apiKey: KEY,
    network: "eth-mainnet",
    addresses: [A],
  }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PriceApiError);
  expect((error as Error).message).toMatch(/^Alchemy price API unreachable: /);
  expect((error as Error).message).not.toContain(KEY);
  expect((error as Error).message).not.toContain("127.0.0.1");
});

test("args: more than 25 addresses in one call is refused before any request", async () => {
  const many = Array.from({ length: 26 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`);
  await expect(call(many)).rejects.toThrow(RangeError);
  expect(server.requests).toHaveLength(0);
});
