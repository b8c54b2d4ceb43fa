import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { issuesOf } from "./_test/issuesOf.ts";
import { resolveConfig } from "./resolveConfig.ts";
import type { ConfigFile } from "./schema.ts";

const ROUTER = "0xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const PAIR = "0xBbBbBbBbBbBbBbBbBbBbBbBbBbBbBbBbBbBbBbBb";
const TOKEN = "0xCcCcCcCcCcCcCcCcCcCcCcCcCcCcCcCcCcCcCcCc";
const QUOTE = "0xDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDd";
const swap = { type: "event", name: "Swap", inputs: [], anonymous: false };
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "protoscan-resolve-"));
  mkdirSync(join(dir, "abis"));
  writeFileSync(join(dir, "abis", "Pair.json"), JSON.stringify({ abi: [swap] }));
  writeFileSync(join(dir, "abis", "bad.json"), JSON.stringify({ notAbi: true }));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** An in-memory file as tests and the demo build them: defaulted keys left out. */
function file(extra: Record<string, unknown> = {}): ConfigFile {
  return {
    chain: { id: 31337 },
    protocols: [
      {
        id: "demo",
        name: "Demo",
        contracts: [
          { name: "Router", address: ROUTER, abi: [], exclusive: false },
          { name: "Pair", address: PAIR, abi: "./abis/Pair.json" },
        ],
      },
    ],
    tokens: [
      { address: TOKEN, symbol: "TOK", name: "Token", decimals: 18, protocol: "demo", official: true },
      {
        address: QUOTE,
        symbol: "QT",
        name: "Quote",
        decimals: 6,
        protocol: "demo",
        exclusive: true,
        price: { usd: 1 },
      },
    ],
    ...extra,
  } as unknown as ConfigFile;
}

test("default", () => {
  const config = resolveConfig(file(), dir);
  expect(config.path).toBeNull();
  expect(config.chain).toEqual({ id: 31337, name: "unknown" });
  expect(config.rpc).toEqual({ urls: ["http://127.0.0.1:8545"], batchSize: 100, timeoutMs: 10_000 });
  expect(config.indexer).toEqual({
    pollIntervalSeconds: 300,
    logChunkBlocks: 5000,
    startBlock: 0,
    confirmations: 0,
  });
  expect(config.api).toEqual({
    corsOrigins: ["*"],
    rateLimitPerMinute: 600,
    trackTxApiKeys: [],
    etherscanApiKeys: [],
  });
  expect(config.webhooks).toEqual({});
  expect(config.prices).toEqual({ cacheSeconds: 300 });
  expect(config.protocols).toEqual([
    {
      id: "demo",
      name: "Demo",
      contracts: [
        { name: "Router", address: ROUTER.toLowerCase(), abi: [], exclusive: false },
        { name: "Pair", address: PAIR.toLowerCase(), abi: [swap], exclusive: true },
      ],
      tvlAddresses: [PAIR.toLowerCase()],
      actions: {},
    },
  ]);
});

test("behavior: token exclusive defaults to official, addresses are lowercased", () => {
  const [token, quote] = resolveConfig(
    file({
      tokens: [
        {
          address: TOKEN,
          symbol: "T",
          name: "T",
          decimals: 18,
          protocol: "demo",
          official: true,
          price: { pool: PAIR, quote: QUOTE, minQuoteLiquidity: "10" },
        },
        { address: QUOTE, symbol: "Q", name: "Q", decimals: 6, protocol: "demo", price: { usd: 1 } },
      ],
    }),
    dir,
  ).tokens;
  expect(token).toEqual({
    address: TOKEN.toLowerCase(),
    symbol: "T",
    name: "T",
    decimals: 18,
    protocol: "demo",
    color: "#888888",
    logo: "",
    official: true,
    exclusive: true,
    price: { pool: PAIR.toLowerCase(), quote: QUOTE.toLowerCase(), minQuoteLiquidity: "10" },
  });
  expect(quote).toMatchObject({ official: false, exclusive: false, price: { usd: 1 } });
  expect(Object.keys(quote?.price ?? {})).toEqual(["usd"]);
});

test("behavior: configured tvlAddresses are kept, lowercased and de-duplicated", () => {
  const protocols = [
    {
      id: "demo",
      name: "Demo",
      contracts: [{ name: "Pair", address: PAIR, abi: [] }],
      tvlAddresses: [ROUTER, ROUTER.toLowerCase()],
    },
  ];
  expect(resolveConfig(file({ protocols, tokens: [] }), dir).protocols[0]?.tvlAddresses).toEqual([
    ROUTER.toLowerCase(),
  ]);
});

test("behavior: optional sections are copied only when present", () => {
  const config = resolveConfig(
    file({
      rpc: { urls: ["https://a.example"], maxRequestsPerSecond: 5 },
      webhooks: { alchemy: { signingKeys: ["whsec_1"] } },
      prices: { api: { kind: "defillama", baseUrl: "http://127.0.0.1:9/" } },
    }),
    dir,
  );
  expect(config.rpc).toEqual({
    urls: ["https://a.example"],
    maxRequestsPerSecond: 5,
    batchSize: 100,
    timeoutMs: 10_000,
  });
  expect(config.webhooks).toEqual({ alchemy: { signingKeys: ["whsec_1"] } });
  expect(config.prices).toEqual({
    cacheSeconds: 300,
    api: { kind: "defillama", baseUrl: "http://127.0.0.1:9" },
  });
});

test("args: baseDir null resolves ABI paths from the working directory", () => {
  const protocols = [
    {
      id: "demo",
      name: "Demo",
      contracts: [{ name: "Pair", address: PAIR, abi: join(dir, "abis", "Pair.json") }],
    },
  ];
  expect(resolveConfig(file({ protocols, tokens: [] }), null).protocols[0]?.contracts[0]?.abi).toEqual([
    swap,
  ]);
});

test("error: ABI files, schema and cross-field problems are named by key path", () => {
  const protocols = [
    {
      id: "demo",
      name: "Demo",
      contracts: [
        { name: "A", address: ROUTER, abi: "./abis/x.json" },
        { name: "B", address: PAIR, abi: "./abis/bad.json" },
      ],
    },
  ];
  expect(issuesOf(() => resolveConfig(file({ protocols, tokens: [] }), dir))).toEqual([
    "protocols[0].contracts[0].abi: cannot read ./abis/x.json (ENOENT)",
    "protocols[0].contracts[1].abi: not an ABI array (./abis/bad.json)",
  ]);
  const tokens = [{ address: TOKEN, symbol: "T", name: "T", decimals: 18, protocol: "other" }];
  expect(issuesOf(() => resolveConfig(file({ tokens }), dir))).toEqual([
    'tokens[0].protocol: unknown protocol "other" (configured: demo)',
  ]);
  expect(issuesOf(() => resolveConfig(file({ chain: { id: -1 } }), dir))).toEqual(["chain.id: must be >= 1"]);
});
