import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Abi } from "viem";
import { Document } from "yaml";
import type { ConfigFile } from "../config/schema.ts";
import type { DemoDeployment } from "./deploy.ts";

export type DemoConfigOptions = {
  rpcUrl: string;
  /** Default 2: the demo chain moves fast and the explorer should follow it closely. */
  pollIntervalSeconds?: number;
};

/** Router functions named for what they do (the decoder would otherwise fall back to its own naming). */
const SWAP_ACTIONS: Record<string, string> = {
  swapExactTokensForTokens: "swap",
  swapTokensForExactTokens: "swap",
  swapExactETHForTokens: "swap",
  swapTokensForExactETH: "swap",
  swapExactTokensForETH: "swap",
  swapETHForExactTokens: "swap",
  addLiquidity: "addLiquidity",
  addLiquidityETH: "addLiquidity",
  removeLiquidity: "removeLiquidity",
  removeLiquidityETH: "removeLiquidity",
};

/** What the config takes of a deployment (the API benchmark passes made-up addresses: nothing is deployed). */
export type DemoConfigDeployment = Pick<DemoDeployment, "chainId" | "startBlock" | "tokens"> & {
  contracts: Pick<
    DemoDeployment["contracts"],
    "router" | "pairDemoUsdc" | "pairWethUsdc" | "vault" | "disperse"
  >;
  abis: Pick<DemoDeployment["abis"], "router" | "pair" | "stakingVault" | "disperse">;
};

/**
 * The protoscan config for a demo deployment (SPEC §1 "Config file"), self-contained: ABIs are inline arrays.
 *
 * - `demoswap`: the Router (exclusive) and both pairs (exclusive; they hold the liquidity, so they are the
 *   protocol's `tvlAddresses`).
 * - `demovault`: the StakingVault (exclusive), and Disperse as a shared contract (`exclusive: false`, reached
 *   only through track-tx and webhooks).
 * - Tokens: DEMO (official, priced from the DEMO/USDC pool), USDC (static 1.0 USD), WETH (priced from the
 *   WETH/USDC pool), RWD (unpriced: shows how an unpriced token reads).
 */
export function demoConfigFile(deployment: DemoConfigDeployment, options: DemoConfigOptions): ConfigFile {
  const { contracts: c, tokens: t, abis } = deployment;
  return {
    chain: { id: deployment.chainId, name: "anvil" },
    rpc: { urls: [options.rpcUrl], batchSize: 100, timeoutMs: 10_000 },
    indexer: {
      pollIntervalSeconds: options.pollIntervalSeconds ?? 2,
      logChunkBlocks: 5000,
      startBlock: deployment.startBlock,
      confirmations: 0,
    },
    api: { corsOrigins: ["*"], rateLimitPerMinute: 600, trackTxApiKeys: [], etherscanApiKeys: [] },
    webhooks: {},
    // Prices move with every swap on the demo chain: refresh them more often than the 5-minute default.
    prices: { cacheSeconds: 30 },
    protocols: [
      {
        id: "demoswap",
        name: "DemoSwap",
        contracts: [
          { name: "Router", address: c.router, abi: inline(abis.router), exclusive: true },
          { name: "DEMO/USDC Pair", address: c.pairDemoUsdc, abi: inline(abis.pair), exclusive: true },
          { name: "WETH/USDC Pair", address: c.pairWethUsdc, abi: inline(abis.pair), exclusive: true },
        ],
        tvlAddresses: [c.pairDemoUsdc, c.pairWethUsdc],
        actions: SWAP_ACTIONS,
      },
      {
        id: "demovault",
        name: "DemoVault",
        contracts: [
          { name: "StakingVault", address: c.vault, abi: inline(abis.stakingVault), exclusive: true },
          { name: "Disperse", address: c.disperse, abi: inline(abis.disperse), exclusive: false },
        ],
        tvlAddresses: [c.vault],
        // deposit/withdraw/claim already get the built-in names; Disperse has no built-in one.
        actions: { disperseToken: "disperse", disperseTokenSimple: "disperse", disperseEther: "disperse" },
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
        price: { usd: 1.0 },
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
}

/**
 * Write a config file as YAML (creating the folder), each inline ABI as a JSON file of its own in `abis/` beside
 * it, referenced by its path (the config's `abi: ./abis/<name>.json`; one file per distinct ABI, named after
 * the first contract that uses it).
 *
 * Why files: the YAML parser took 240-280 ms to read the demo's 34 KB of inline ABIs at every start, a tenth of
 * the time to `/healthz` on the development machine; as JSON files the whole config loads in 35-45 ms
 * (docs/performance.md, "First start"). The same as a user's config that names its ABI files.
 */
export async function writeDemoConfig(path: string, file: ConfigFile): Promise<void> {
  const dir = dirname(path);
  const abiFiles = new Map<string, string>();
  const protocols = file.protocols.map((protocol) => ({
    ...protocol,
    contracts: protocol.contracts.map((contract) => {
      if (!Array.isArray(contract.abi)) return contract;
      const json = JSON.stringify(contract.abi);
      let name = abiFiles.get(json);
      if (name === undefined) {
        name = uniqueName(slug(contract.name), new Set(abiFiles.values()));
        abiFiles.set(json, name);
      }
      return { ...contract, abi: `./${ABI_DIR}/${name}.json` };
    }),
  }));
  const doc = new Document({ ...file, protocols });
  doc.commentBefore =
    " Generated by `protoscan demo` for a local anvil chain; rewritten on every demo start.";
  await mkdir(join(dir, ABI_DIR), { recursive: true });
  await Promise.all(
    [...abiFiles].map(([json, name]) => writeFile(join(dir, ABI_DIR, `${name}.json`), `${json}\n`)),
  );
  await writeFile(path, doc.toString({ lineWidth: 0 }));
}

/** The folder beside the config that holds its ABIs. */
const ABI_DIR = "abis";

/** `DEMO/USDC Pair` -> `demo-usdc-pair`. */
function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "") || "abi"
  );
}

/** `base`, or `base-2`, `base-3`… when it is taken. */
function uniqueName(base: string, taken: ReadonlySet<string>): string {
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
  return name;
}

type InlineAbi = Extract<ConfigFile["protocols"][number]["contracts"][number]["abi"], unknown[]>;

/** The schema wants a mutable array of objects; a viem `Abi` is a readonly array of them. */
function inline(abi: Abi): InlineAbi {
  return abi.map((item) => ({ ...item }));
}
