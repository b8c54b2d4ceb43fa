import { expect, test } from "vitest";
import { checkConfigFile } from "./checkConfigFile.ts";
import { parseConfigFile } from "./parseConfigFile.ts";

const A = "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const B = "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const C = "0xcccccccccccccccccccccccccccccccccccccccc";
const POOL = "0xdddddddddddddddddddddddddddddddddddddddd";

function token(address: string, extra: Record<string, unknown> = {}) {
  return { address, symbol: "T", name: "Token", decimals: 18, protocol: "p", ...extra };
}

function check(extra: Record<string, unknown>): string[] {
  return checkConfigFile(
    parseConfigFile({
      chain: { id: 1 },
      protocols: [{ id: "p", name: "P", contracts: [{ name: "C", address: C, abi: [] }] }],
      ...extra,
    }),
  );
}

test("default: a consistent file has no issues", () => {
  expect(
    check({
      tokens: [token(A, { price: { pool: POOL, quote: B } }), token(B, { price: { usd: 1 } })],
      prices: { api: { kind: "alchemy", apiKey: "k", network: "eth-mainnet" } },
    }),
  ).toEqual([]);
});

test("error: duplicate protocol ids", () => {
  const protocols = [
    { id: "p", name: "P", contracts: [] },
    { id: "q", name: "Q", contracts: [] },
    { id: "p", name: "P again", contracts: [] },
  ];
  expect(check({ protocols })).toEqual(['protocols[2].id: duplicate protocol id "p" (also protocols[0].id)']);
});

test("error: duplicate contract addresses, across protocols and in any case", () => {
  const protocols = [
    { id: "p", name: "P", contracts: [{ name: "C", address: C, abi: [] }] },
    { id: "q", name: "Q", contracts: [{ name: "D", address: C.toUpperCase().replace("0X", "0x"), abi: [] }] },
  ];
  expect(check({ protocols })).toEqual([
    `protocols[1].contracts[0].address: duplicate contract address ${C} (also protocols[0].contracts[0].address)`,
  ]);
});

test("error: token protocol must be configured", () => {
  expect(check({ tokens: [token(A, { protocol: "nope" })] })).toEqual([
    'tokens[0].protocol: unknown protocol "nope" (configured: p)',
  ]);
  expect(check({ protocols: [], tokens: [token(A)] })).toEqual([
    'tokens[0].protocol: unknown protocol "p" (no protocols configured)',
  ]);
});

test("error: duplicate token addresses", () => {
  expect(check({ tokens: [token(A), token(B), token(A.toUpperCase().replace("0X", "0x"))] })).toEqual([
    `tokens[2].address: duplicate token address ${A} (also tokens[0].address)`,
  ]);
});

test("error: price.pool and price.quote come together", () => {
  expect(check({ tokens: [token(A, { price: { pool: POOL } })] })).toEqual([
    "tokens[0].price.quote: is required when price.pool is set",
  ]);
  expect(check({ tokens: [token(A, { price: { quote: B } }), token(B, { price: { usd: 1 } })] })).toEqual([
    "tokens[0].price.pool: is required when price.quote is set",
  ]);
});

test("error: price.quote must be a tracked token", () => {
  expect(check({ tokens: [token(A, { price: { pool: POOL, quote: B } })] })).toEqual([
    `tokens[0].price.quote: ${B} is not a tracked token (add it to tokens)`,
  ]);
  expect(check({ tokens: [token(A, { price: { pool: POOL, quote: A } })] })).toEqual([
    "tokens[0].price.quote: must be another token than the priced token itself",
  ]);
});

test("error: price.quote must itself be priced", () => {
  expect(check({ tokens: [token(A, { price: { pool: POOL, quote: B } }), token(B)] })).toEqual([
    `tokens[0].price.quote: ${B} has no price (give it price.usd or price.pool, or configure prices.api)`,
  ]);
  // A chain of pools that ends in a static price is fine.
  const chain = [
    token(A, { price: { pool: POOL, quote: B } }),
    token(B, { price: { pool: POOL, quote: C } }),
    token(C, { price: { usd: 2 } }),
  ];
  expect(check({ tokens: chain })).toEqual([]);
  // With a price API any token may be priced by it.
  expect(
    check({
      tokens: [token(A, { price: { pool: POOL, quote: B } }), token(B)],
      prices: { api: { kind: "defillama" } },
    }),
  ).toEqual([]);
});

test("error: circular pool pricing", () => {
  const tokens = [
    token(A, { price: { pool: POOL, quote: B } }),
    token(B, { price: { pool: POOL, quote: A } }),
  ];
  expect(check({ tokens })).toEqual([
    `tokens[0].price.quote: circular pool pricing through ${B}`,
    `tokens[1].price.quote: circular pool pricing through ${A}`,
  ]);
});

test("error: alchemy price API requires apiKey and network", () => {
  expect(check({ prices: { api: { kind: "alchemy" } } })).toEqual([
    "prices.api.apiKey: is required when kind is alchemy",
    "prices.api.network: is required when kind is alchemy",
  ]);
  expect(check({ prices: { api: { kind: "alchemy", apiKey: "", network: "eth-mainnet" } } })).toEqual([
    "prices.api.apiKey: is required when kind is alchemy",
  ]);
  expect(check({ prices: { api: { kind: "defillama" } } })).toEqual([]);
});
