import { Settings } from "typebox/system";
import { expect, test } from "vitest";
import { issuesOf } from "./_test/issuesOf.ts";
import { parseConfigFile } from "./parseConfigFile.ts";

const A = "0x1111111111111111111111111111111111111111";

test("default: every default as SPEC §1", () => {
  expect(parseConfigFile({ chain: { id: 31337 } })).toEqual({
    chain: { id: 31337, name: "unknown" },
    rpc: { urls: ["http://127.0.0.1:8545"], batchSize: 100, timeoutMs: 10_000 },
    indexer: { pollIntervalSeconds: 300, logChunkBlocks: 5000, startBlock: 0, confirmations: 0 },
    api: { corsOrigins: ["*"], rateLimitPerMinute: 600, trackTxApiKeys: [], etherscanApiKeys: [] },
    webhooks: {},
    prices: { cacheSeconds: 300 },
    protocols: [],
    tokens: [],
  });
});

test("default: nested defaults of protocols, contracts and tokens", () => {
  const file = parseConfigFile({
    chain: { id: 1 },
    protocols: [{ id: "p", name: "P", contracts: [{ name: "C", address: A, abi: [] }] }],
    tokens: [{ address: A, symbol: "T", name: "Token", decimals: 18, protocol: "p" }],
  });
  expect(file.protocols[0]).toEqual({
    id: "p",
    name: "P",
    contracts: [{ name: "C", address: A, abi: [], exclusive: true }],
    actions: {},
  });
  expect(file.tokens[0]).toEqual({
    address: A,
    symbol: "T",
    name: "Token",
    decimals: 18,
    protocol: "p",
    color: "#888888",
    logo: "",
    official: false,
  });
});

test("behavior: given values win over defaults", () => {
  const file = parseConfigFile({
    chain: { id: 1 },
    rpc: { urls: ["wss://x"], batchSize: 5 },
    api: { corsOrigins: [] },
  });
  expect(file.rpc).toEqual({ urls: ["wss://x"], batchSize: 5, timeoutMs: 10_000 });
  expect(file.api.corsOrigins).toEqual([]);
});

test("behavior: an empty key (null) counts as absent", () => {
  const file = parseConfigFile({ chain: { id: 1 }, webhooks: null, indexer: { confirmations: null } });
  expect(file.webhooks).toEqual({});
  expect(file.indexer.confirmations).toBe(0);
});

test("behavior: the input is not mutated", () => {
  const raw = { chain: { id: 1 } };
  parseConfigFile(raw);
  expect(raw).toEqual({ chain: { id: 1 } });
});

test("behavior: $schema key is accepted", () => {
  expect(parseConfigFile({ $schema: "./docs/config.schema.json", chain: { id: 1 } }).chain.id).toBe(1);
});

test("error: missing required key", () => {
  expect(issuesOf(() => parseConfigFile({ chain: {} }))).toEqual(["chain.id: is required"]);
  expect(issuesOf(() => parseConfigFile({}))).toEqual(["chain: is required"]);
});

test("error: unknown key", () => {
  expect(issuesOf(() => parseConfigFile({ chain: { id: 1 }, api: { foo: 1 } }))).toEqual([
    "api.foo: unknown key",
  ]);
  expect(issuesOf(() => parseConfigFile({ chain: { id: 1 }, indexers: {} }))).toEqual([
    "indexers: unknown key",
  ]);
});

test("error: wrong type", () => {
  expect(issuesOf(() => parseConfigFile({ chain: { id: 1 }, indexer: { logChunkBlocks: 1.5 } }))).toEqual([
    "indexer.logChunkBlocks: must be an integer",
  ]);
  expect(issuesOf(() => parseConfigFile({ chain: { id: 1 }, api: { corsOrigins: "*" } }))).toEqual([
    "api.corsOrigins: must be a list",
  ]);
});

test("error: bad chain id type", () => {
  expect(issuesOf(() => parseConfigFile({ chain: { id: "31337" } }))).toEqual([
    "chain.id: must be an integer",
  ]);
  expect(issuesOf(() => parseConfigFile({ chain: { id: 0 } }))).toEqual(["chain.id: must be >= 1"]);
});

test("error: bad address uses the x-error annotation", () => {
  const raw = {
    chain: { id: 1 },
    protocols: [
      {
        id: "p",
        name: "P",
        contracts: [
          { name: "A", address: A, abi: [] },
          { name: "B", address: "0x1234", abi: [] },
        ],
      },
    ],
  };
  expect(issuesOf(() => parseConfigFile(raw))).toEqual([
    "protocols[0].contracts[1].address: not a 20-byte hex address",
  ]);
});

test("error: union of literals lists the allowed values", () => {
  expect(
    issuesOf(() => parseConfigFile({ chain: { id: 1 }, prices: { api: { kind: "coingecko" } } })),
  ).toEqual(['prices.api.kind: must be one of "alchemy", "defillama"']);
});

test("error: abi that is neither a path nor an array", () => {
  const raw = {
    chain: { id: 1 },
    protocols: [{ id: "p", name: "P", contracts: [{ name: "C", address: A, abi: 5 }] }],
  };
  expect(issuesOf(() => parseConfigFile(raw))).toEqual([
    "protocols[0].contracts[0].abi: must be a path to an ABI file or an inline ABI array",
  ]);
});

test("error: every problem is reported, not only the first eight", () => {
  const raw = {
    chain: { id: "x", extra: 1 },
    rpc: { urls: ["ftp://x"], batchSize: 0 },
    indexer: { pollIntervalSeconds: 0, logChunkBlocks: "5000", startBlock: -1, confirmations: 1.5 },
    api: { rateLimitPerMinute: "a", trackTxApiKeys: [""] },
    tokens: [{ address: "0x12", symbol: "", name: "T", decimals: 256, protocol: "Bad Id", color: "red" }],
  };
  expect(issuesOf(() => parseConfigFile(raw))).toEqual([
    "chain.extra: unknown key",
    "chain.id: must be an integer",
    "rpc.urls[0]: not an http(s) or ws(s) URL",
    "rpc.batchSize: must be >= 1",
    "indexer.pollIntervalSeconds: must be > 0",
    "indexer.logChunkBlocks: must be an integer",
    "indexer.startBlock: must be >= 0",
    "indexer.confirmations: must be an integer",
    "api.rateLimitPerMinute: must be an integer",
    "api.trackTxApiKeys[0]: must not be empty",
    "tokens[0].address: not a 20-byte hex address",
    "tokens[0].symbol: must not be empty",
    "tokens[0].decimals: must be <= 255",
    "tokens[0].protocol: must be a lowercase identifier (a-z, 0-9, _ and -, at most 64 characters)",
    "tokens[0].color: not a #rrggbb colour",
  ]);
});

test("error: the root must be an object", () => {
  expect(issuesOf(() => parseConfigFile(["a"]))).toEqual(["(root): must be an object (a map of keys)"]);
});

test("behavior: typebox's global maxErrors setting is restored", () => {
  const before = Settings.Get().maxErrors;
  issuesOf(() => parseConfigFile({}));
  expect(Settings.Get().maxErrors).toBe(before);
});
