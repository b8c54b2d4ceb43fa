import { afterAll, beforeAll, beforeEach, expect, test } from "vitest";
import { type PriceServer, startPriceServer } from "./_test/priceServer.ts";
import { PriceApiError } from "./errors.ts";
import { fetchDefiLlamaPrices } from "./fetchDefiLlamaPrices.ts";

const A = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
const B = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
const C = "0x6b175474e89094c44da98b954eedeac495271d0f";

let server: PriceServer;
beforeAll(async () => {
  server = await startPriceServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.quotes.clear();
  server.requests.length = 0;
  server.down = false;
});

const call = (addresses: string[]) =>
  fetchDefiLlamaPrices({ baseUrl: server.url, chain: "ethereum", addresses });

test("default: one GET of chain:address ids, prices with their Unix-second timestamps", async () => {
  server.set(A, { usd: 1.0001, at: new Date("2026-11-21T08:00:00.000Z") });
  server.set(B, { usd: 3000, at: new Date("2026-11-21T07:59:59.000Z") });
  const result = await call([A, B]);
  expect(result.quotes).toEqual(
    new Map([
      [A, { usd: 1.0001, at: new Date("2026-11-21T08:00:00.000Z") }],
      [B, { usd: 3000, at: new Date("2026-11-21T07:59:59.000Z") }],
    ]),
  );
  expect(server.requests).toEqual([
    { provider: "defillama", path: `/prices/current/ethereum:${A},ethereum:${B}`, tokens: [A, B] },
  ]);
});

test("behavior: a confidence below 0.9 or a missing coin is reported and left out", async () => {
  server.set(A, { usd: 1, confidence: 0.95 });
  server.set(B, { usd: 2800, confidence: 0.5 });
  const result = await call([A, B, C]);
  expect([...result.quotes.keys()]).toEqual([A]);
  expect(result.errors).toEqual(
    new Map([
      [B, "confidence 0.5 below 0.9"],
      [C, "not in the answer"],
    ]),
  );
});

test("behavior: ids are matched whatever case the address was asked in", async () => {
  server.set(B, { usd: 3000 });
  const result = await call([B.toUpperCase().replace("0X", "0x")]);
  expect(result.quotes.get(B)?.usd).toBe(3000);
});

test("error: a non-2xx answer is a PriceApiError", async () => {
  server.down = true;
  await expect(call([A])).rejects.toThrow(new PriceApiError("DefiLlama price API answered HTTP 500"));
});
