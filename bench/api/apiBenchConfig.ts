import { createHash } from "node:crypto";
import { resolveConfig } from "../../src/config/resolveConfig.ts";
import type { Address, Config, ConfigFile } from "../../src/config/schema.ts";
import { loadUniswapArtifacts } from "../../src/demo/uniswapArtifacts.ts";

/** A deterministic, random-looking lowercase address for a name (no chain: nothing is deployed). */
export function benchAddress(name: string): Address {
  return `0x${createHash("sha256").update(`protoscan-bench:${name}`).digest("hex").slice(0, 40)}`;
}

/** The addresses of the demo-like deployment the benchmark's data pretends to come from. */
export const BENCH_CONTRACTS = {
  router: benchAddress("router"),
  pairDemoUsdc: benchAddress("pair DEMO/USDC"),
  pairWethUsdc: benchAddress("pair WETH/USDC"),
  vault: benchAddress("vault"),
  disperse: benchAddress("disperse"),
} as const;

export const BENCH_TOKENS = {
  DEMO: { address: benchAddress("token DEMO"), symbol: "DEMO", name: "Demo Token", decimals: 18 },
  USDC: { address: benchAddress("token USDC"), symbol: "USDC", name: "USD Coin", decimals: 6 },
  WETH: { address: benchAddress("token WETH"), symbol: "WETH", name: "Wrapped Ether", decimals: 18 },
  RWD: { address: benchAddress("token RWD"), symbol: "RWD", name: "Reward Token", decimals: 18 },
} as const;

export type BenchTokenSymbol = keyof typeof BENCH_TOKENS;

/** The prices seeded into the `prices` table (the `dex` ones as the pools would give them). */
export const BENCH_PRICES: Partial<Record<BenchTokenSymbol, { usd: number; source: "dex" | "static" }>> = {
  DEMO: { usd: 2, source: "dex" },
  USDC: { usd: 1, source: "static" },
  WETH: { usd: 3000, source: "dex" },
};

type InlineAbi = Extract<ConfigFile["protocols"][number]["contracts"][number]["abi"], unknown[]>;

const address = (name: string) => ({ name, type: "address" });
const uint = (name: string) => ({ name, type: "uint256" });

/** The StakingVault and Disperse ABIs, as far as the benchmark's transactions use them. */
const VAULT_ABI: InlineAbi = [
  { type: "function", name: "deposit", stateMutability: "nonpayable", inputs: [uint("amount")], outputs: [] },
  {
    type: "function",
    name: "withdraw",
    stateMutability: "nonpayable",
    inputs: [uint("amount")],
    outputs: [],
  },
  { type: "function", name: "claim", stateMutability: "nonpayable", inputs: [], outputs: [] },
  {
    type: "event",
    name: "Deposited",
    anonymous: false,
    inputs: [
      { ...address("user"), indexed: true },
      { ...uint("amount"), indexed: false },
    ],
  },
];
const DISPERSE_ABI: InlineAbi = [
  {
    type: "function",
    name: "disperseToken",
    stateMutability: "nonpayable",
    inputs: [
      address("token"),
      { name: "recipients", type: "address[]" },
      { name: "values", type: "uint256[]" },
    ],
    outputs: [],
  },
];

/**
 * The configuration the API benchmark serves: the demo's protocols and tokens (`src/demo/demoConfig.ts`) at
 * made-up addresses, with the JSON-RPC stand-in at `rpcUrl`. Rate limiting is lifted (a billion requests
 * per minute: it must not interfere with the load), and prices are cached for a day so that the prices
 * seeded in the table serve the whole run (the stand-in node answers no pool reads).
 */
export function apiBenchConfig(rpcUrl: string): Config {
  const uniswap = loadUniswapArtifacts();
  const routerAbi = uniswap.router.abi.map((item) => ({ ...item }));
  const pairAbi = uniswap.pair.abi.map((item) => ({ ...item }));
  const c = BENCH_CONTRACTS;
  const t = BENCH_TOKENS;
  const file: ConfigFile = {
    chain: { id: 31337, name: "bench" },
    rpc: { urls: [rpcUrl], batchSize: 100, timeoutMs: 10_000 },
    indexer: { pollIntervalSeconds: 300, logChunkBlocks: 5000, startBlock: 0, confirmations: 0 },
    api: { corsOrigins: ["*"], rateLimitPerMinute: 1_000_000_000, trackTxApiKeys: [], etherscanApiKeys: [] },
    webhooks: {},
    prices: { cacheSeconds: 86_400 },
    protocols: [
      {
        id: "demoswap",
        name: "DemoSwap",
        contracts: [
          { name: "Router", address: c.router, abi: routerAbi, exclusive: true },
          { name: "DEMO/USDC Pair", address: c.pairDemoUsdc, abi: pairAbi, exclusive: true },
          { name: "WETH/USDC Pair", address: c.pairWethUsdc, abi: pairAbi, exclusive: true },
        ],
        tvlAddresses: [c.pairDemoUsdc, c.pairWethUsdc],
        actions: { swapExactTokensForTokens: "swap" },
      },
      {
        id: "demovault",
        name: "DemoVault",
        contracts: [
          { name: "StakingVault", address: c.vault, abi: VAULT_ABI, exclusive: true },
          { name: "Disperse", address: c.disperse, abi: DISPERSE_ABI, exclusive: false },
        ],
        tvlAddresses: [c.vault],
        actions: { disperseToken: "disperse" },
      },
    ],
    tokens: [
      {
        ...t.DEMO,
        protocol: "demoswap",
        color: "#ff6600",
        logo: "",
        official: true,
        exclusive: true,
        price: { pool: c.pairDemoUsdc, quote: t.USDC.address, minQuoteLiquidity: "1000" },
      },
      {
        ...t.USDC,
        protocol: "demoswap",
        color: "#2775ca",
        logo: "",
        official: false,
        exclusive: true,
        price: { usd: 1 },
      },
      {
        ...t.WETH,
        protocol: "demoswap",
        color: "#627eea",
        logo: "",
        official: false,
        exclusive: false,
        price: { pool: c.pairWethUsdc, quote: t.USDC.address, minQuoteLiquidity: "1000" },
      },
      { ...t.RWD, protocol: "demovault", color: "#22aa66", logo: "", official: false, exclusive: false },
    ],
  };
  return resolveConfig(file, null);
}
