import { createHash } from "node:crypto";
import { parseAbi } from "viem";
import { resolveConfig } from "../../src/config/resolveConfig.ts";
import type { Address, Config, ConfigFile } from "../../src/config/schema.ts";
import { demoConfigFile } from "../../src/demo/demoConfig.ts";
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
  /** moved twice in every transaction, between users only: the CSV export's token (issue 20 item 6) */
  XPT: { address: benchAddress("token XPT"), symbol: "XPT", name: "Export Token", decimals: 18 },
} as const;

export type BenchTokenSymbol = keyof typeof BENCH_TOKENS;

/** The prices seeded into the `prices` table (the `dex` ones as the pools would give them). */
export const BENCH_PRICES: Partial<Record<BenchTokenSymbol, { usd: number; source: "dex" | "static" }>> = {
  DEMO: { usd: 2, source: "dex" },
  USDC: { usd: 1, source: "static" },
  WETH: { usd: 3000, source: "dex" },
};

/** The StakingVault and Disperse ABIs, as far as the benchmark's transactions use them (no solc run needed). */
const VAULT_ABI = parseAbi([
  "function deposit(uint256 amount)",
  "function withdraw(uint256 amount)",
  "function claim()",
  "event Deposited(address indexed user, uint256 amount)",
]);
const DISPERSE_ABI = parseAbi([
  "function disperseToken(address token, address[] recipients, uint256[] values)",
]);

/**
 * The configuration the API benchmark serves: the demo's (`demoConfigFile` of src/demo/demoConfig.ts) for a
 * deployment at made-up addresses, with the JSON-RPC stand-in at `rpcUrl`. What differs: rate limiting is
 * lifted (a billion requests per minute: it must not interfere with the load), prices are cached for a day so
 * that the prices seeded in the table serve the whole run (the stand-in node answers no pool reads), and the
 * poller waits 5 minutes (the data is seeded, not indexed).
 */
export function apiBenchConfig(rpcUrl: string): Config {
  return resolveConfig(apiBenchConfigFile(rpcUrl), null);
}

/** The file form of {@link apiBenchConfig}: what a separate `protoscan start` of the benchmark is given. */
export function apiBenchConfigFile(rpcUrl: string): ConfigFile {
  const uniswap = loadUniswapArtifacts();
  const demo = demoConfigFile(
    {
      chainId: 31337,
      startBlock: 0,
      contracts: BENCH_CONTRACTS,
      tokens: BENCH_TOKENS,
      abis: {
        router: uniswap.router.abi,
        pair: uniswap.pair.abi,
        stakingVault: VAULT_ABI,
        disperse: DISPERSE_ABI,
      },
    },
    { rpcUrl, pollIntervalSeconds: 300 },
  );
  const file: ConfigFile = {
    ...demo,
    chain: { ...demo.chain, name: "bench" },
    api: { ...demo.api, rateLimitPerMinute: 1_000_000_000 },
    prices: { cacheSeconds: 86_400 },
    // XPT, unpriced: its transfers value nothing, so every transaction's valueUsd and every volume stay those
    // of its other transfers (an unpriced transfer counts 0, SPEC §10.2).
    tokens: [
      ...demo.tokens,
      {
        ...BENCH_TOKENS.XPT,
        protocol: "demovault",
        color: "#8844cc",
        logo: "",
        official: false,
        exclusive: false,
      },
    ],
  };
  return file;
}
