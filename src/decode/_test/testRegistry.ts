import { parseAbi } from "viem";
import type { Config } from "../../config/schema.ts";
import { type AbiRegistry, createAbiRegistry } from "../abiRegistry.ts";

/** A small registry for decode tests: a router, a vault, a shared contract and two tokens. */
export const ROUTER = "0x1000000000000000000000000000000000000001";
export const VAULT = "0x1000000000000000000000000000000000000002";
export const SHARED = "0x1000000000000000000000000000000000000003";
export const DEMO = "0x2000000000000000000000000000000000000001";
export const USDC = "0x2000000000000000000000000000000000000002";

export const routerAbi = parseAbi([
  "function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)",
  "function addLiquidity(address tokenA, address tokenB, uint256 amountADesired, uint256 amountBDesired, uint256 amountAMin, uint256 amountBMin, address to, uint256 deadline)",
]);
export const vaultAbi = parseAbi([
  "function deposit(uint256 amount)",
  "function claim()",
  "event Deposited(address indexed user, uint256 amount)",
]);

export function testRegistry(): AbiRegistry {
  const config: Pick<Config, "protocols" | "tokens"> = {
    protocols: [
      {
        id: "demoswap",
        name: "DemoSwap",
        contracts: [{ name: "Router", address: ROUTER, abi: routerAbi, exclusive: true }],
        tvlAddresses: [ROUTER],
        actions: { addLiquidity: "provide" },
      },
      {
        id: "demovault",
        name: "DemoVault",
        contracts: [
          { name: "Vault", address: VAULT, abi: vaultAbi, exclusive: true },
          { name: "Shared", address: SHARED, abi: [], exclusive: false },
        ],
        tvlAddresses: [VAULT],
        actions: {},
      },
    ],
    tokens: [token(DEMO, "DEMO", 18, "demoswap"), token(USDC, "USDC", 6, "demovault")],
  };
  return createAbiRegistry(config);
}

function token(address: `0x${string}`, symbol: string, decimals: number, protocol: string) {
  return {
    address,
    symbol,
    name: symbol,
    decimals,
    protocol,
    color: "#000000",
    logo: "",
    official: true,
    exclusive: true,
  };
}
