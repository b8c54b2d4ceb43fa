// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config text holds ${NAME} references for the loader, not templates
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";
import { issuesOfAsync } from "./_test/issuesOf.ts";
import { loadConfig } from "./loadConfig.ts";

const PAIR = "0x00000000000000000000000000000000000000Aa";
const TOKEN = "0x00000000000000000000000000000000000000bB";
const swap = { type: "event", name: "Swap", inputs: [], anonymous: false };
let dir: string;

const yaml = `
chain:
  id: 31337
  name: anvil
rpc:
  urls: ["\${RPC_URL}"]
indexer:
  confirmations: 2
webhooks:
  alchemy: { signingKeys: ["\${ALCHEMY_SIGNING_KEY}"] }
protocols:
  - id: demoswap
    name: DemoSwap
    contracts:
      - name: Pair
        address: ${PAIR}
        abi: ./abis/Pair.json
tokens:
  - address: "${TOKEN}"
    symbol: DEMO
    name: Demo Token
    decimals: 18
    protocol: demoswap
    official: true
    price: { usd: 2.5 }
`;

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "protoscan-load-"));
  mkdirSync(join(dir, "abis"));
  writeFileSync(join(dir, "abis", "Pair.json"), JSON.stringify([swap]));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const env = { RPC_URL: "http://127.0.0.1:8545", ALCHEMY_SIGNING_KEY: "whsec_test" };

test("default: YAML", async () => {
  const path = write("protoscan.config.yaml", yaml);
  const config = await loadConfig({ path, env });
  expect(config.path).toBe(path);
  expect(config.chain).toEqual({ id: 31337, name: "anvil" });
  expect(config.rpc.urls).toEqual(["http://127.0.0.1:8545"]);
  expect(config.indexer).toEqual({
    pollIntervalSeconds: 300,
    logChunkBlocks: 5000,
    startBlock: 0,
    confirmations: 2,
  });
  expect(config.webhooks).toEqual({ alchemy: { signingKeys: ["whsec_test"] } });
  expect(config.protocols[0]?.contracts).toEqual([
    { name: "Pair", address: PAIR.toLowerCase(), abi: [swap], exclusive: true },
  ]);
  expect(config.protocols[0]?.tvlAddresses).toEqual([PAIR.toLowerCase()]);
  expect(config.tokens[0]).toMatchObject({
    address: TOKEN.toLowerCase(),
    official: true,
    exclusive: true,
    price: { usd: 2.5 },
  });
});

test("args: JSON, with ABI paths relative to the config file", async () => {
  mkdirSync(join(dir, "json"), { recursive: true });
  const path = write(
    "json/config.json",
    JSON.stringify({
      chain: { id: 1 },
      rpc: { urls: ["${RPC_URL}"] },
      protocols: [
        { id: "p", name: "P", contracts: [{ name: "Pair", address: PAIR, abi: "../abis/Pair.json" }] },
      ],
    }),
  );
  const config = await loadConfig({ path, env });
  expect(config.path).toBe(path);
  expect(config.rpc.urls).toEqual(["http://127.0.0.1:8545"]);
  expect(config.protocols[0]?.contracts[0]?.abi).toEqual([swap]);
});

test("behavior: RPC_URL with several URLs replaces rpc.urls", async () => {
  const path = write("override.yml", "chain: { id: 1 }\nrpc: { urls: ['http://file:8545'], batchSize: 7 }\n");
  const config = await loadConfig({
    path,
    env: { RPC_URL: "http://a:8545,https://b.example/v2/key, wss://c.example" },
  });
  expect(config.rpc).toEqual({
    urls: ["http://a:8545", "https://b.example/v2/key", "wss://c.example"],
    batchSize: 7,
    timeoutMs: 10_000,
  });
});

test("behavior: a ${VAR} in rpc.urls need not be set when RPC_URL replaces it", async () => {
  const path = write("unset.yaml", "chain: { id: 1 }\nrpc: { urls: ['${OTHER_URL}'] }\n");
  expect((await loadConfig({ path, env: { RPC_URL: "http://a:8545" } })).rpc.urls).toEqual(["http://a:8545"]);
});

test("error: unset environment variable", async () => {
  const path = write("missing-env.yaml", yaml);
  expect(await issuesOfAsync(loadConfig({ path, env: { ALCHEMY_SIGNING_KEY: "k" } }))).toEqual([
    "rpc.urls[0]: environment variable RPC_URL is not set",
  ]);
  await expect(loadConfig({ path, env: { ALCHEMY_SIGNING_KEY: "k" } })).rejects.toThrowError(
    "rpc.urls[0]: environment variable RPC_URL is not set",
  );
});

test("error: schema problems after interpolation", async () => {
  const path = write("bad.yaml", "chain: { id: 1 }\nrpc: { urls: ['${RPC_URL}'] }\napi: { foo: 1 }\n");
  expect(await issuesOfAsync(loadConfig({ path, env: { RPC_URL: "localhost:8545" } }))).toEqual([
    "rpc.urls[0]: not an http(s) or ws(s) URL",
    "api.foo: unknown key",
  ]);
});

test("error: an actions override the store or the API filter could not take", async () => {
  const long = "a".repeat(65);
  const path = write(
    "actions.yaml",
    `chain: { id: 1 }\nrpc: { urls: ["http://127.0.0.1:8545"] }\nprotocols:\n  - id: p\n    name: P\n    actions: { a: "", b: "swap\\0", c: "tab\\there", d: ${long}, e: "add liquidity", f: swap }\n`,
  );
  expect(await issuesOfAsync(loadConfig({ path, env }))).toEqual(
    ["a", "b", "c", "d"].map(
      (key) => `protocols[0].actions.${key}: must be 1 to 64 characters without control characters`,
    ),
  );
});

test("error: missing config file", async () => {
  expect(await issuesOfAsync(loadConfig({ path: join(dir, "nope.yaml"), env }))).toEqual([
    `cannot read config file ${join(dir, "nope.yaml")} (ENOENT)`,
  ]);
});

test("error: the message lists every issue", async () => {
  const path = write("many.yaml", "chain: { id: x }\nindexer: { logChunkBlocks: 1.5 }\n");
  await expect(loadConfig({ path, env })).rejects.toThrowError(
    "invalid configuration:\n  chain.id: must be an integer\n  indexer.logChunkBlocks: must be an integer",
  );
});

test("behavior: the committed example passes validation", async () => {
  const path = fileURLToPath(new URL("../../protoscan.config.example.yaml", import.meta.url));
  const config = await loadConfig({ path, env: { RPC_URL: "https://eth.example.org/v2/secret" } });
  expect(config.chain.id).toBe(1);
  expect(config.rpc.urls).toEqual(["https://eth.example.org/v2/secret"]);
  expect(config.protocols.map((p) => p.id)).toEqual(["uniswap-v2"]);
  expect(config.protocols[0]?.contracts.every((c) => c.abi.length > 0)).toBe(true);
  expect(config.tokens.map((t) => t.symbol)).toEqual(["USDC", "WETH", "DAI"]);
  expect(config.tokens.every((t) => t.address === t.address.toLowerCase())).toBe(true);
});
