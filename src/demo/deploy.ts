import { type Abi, erc20Abi, maxUint256, parseUnits } from "viem";
import type { Address } from "../config/schema.ts";
import { type Artifact, compileDemoContracts } from "./compile.ts";
import { createDemoClient } from "./demoClient.ts";
import { DEMO_USERS, DEPLOYER } from "./devAccounts.ts";
import { loadUniswapArtifacts } from "./uniswapArtifacts.ts";

export type DemoTokenSymbol = "USDC" | "DEMO" | "WETH" | "RWD";
export type DemoTokenInfo = { address: Address; symbol: DemoTokenSymbol; name: string; decimals: number };
export type DemoPair = { address: Address; token0: Address; token1: Address };

/** Everything the demo deployed. A plain JSON-serializable object (no bigint, no class instances). */
export type DemoDeployment = {
  chainId: number;
  /** Account 0: deployed and owns everything, provided the initial liquidity. */
  deployer: Address;
  /** Accounts 1..5: funded with every token and approved for the router, the vault and Disperse. */
  users: Address[];
  /** Block of the first deployment transaction (a good `indexer.startBlock`). */
  startBlock: number;
  /** Block of the last setup transaction. */
  endBlock: number;
  contracts: {
    weth: Address;
    factory: Address;
    router: Address;
    usdc: Address;
    demo: Address;
    rwd: Address;
    vault: Address;
    disperse: Address;
    pairDemoUsdc: Address;
    pairWethUsdc: Address;
  };
  tokens: Record<DemoTokenSymbol, DemoTokenInfo>;
  pairs: { demoUsdc: DemoPair; wethUsdc: DemoPair };
  abis: {
    erc20: Abi;
    weth9: Abi;
    factory: Abi;
    pair: Abi;
    router: Abi;
    demoToken: Abi;
    stakingVault: Abi;
    disperse: Abi;
  };
};

/** Initial liquidity: DEMO trades at 0.50 USDC and WETH at 3000 USDC, with 1M+ USDC on the quote side. */
export const DEMO_LIQUIDITY = {
  demoUsdc: { demo: parseUnits("2000000", 18), usdc: parseUnits("1000000", 6) },
  wethUsdc: { weth: parseUnits("500", 18), usdc: parseUnits("1500000", 6) },
} as const;

/** What each of accounts 1..5 receives. */
export const DEMO_USER_FUNDING = {
  usdc: parseUnits("200000", 6),
  demo: parseUnits("500000", 18),
  weth: parseUnits("50", 18),
} as const;

/** StakingVault rewards: 1 RWD per second shared by all stakers, 5M RWD in the vault. */
const REWARD_RATE = parseUnits("1", 18);
const VAULT_REWARDS = parseUnits("5000000", 18);

/**
 * Deploy the demo world on an anvil node whose default dev accounts are unlocked: WETH9, UniswapV2Factory,
 * UniswapV2Router02, the ERC-20s USDC ("Demo USD", 6 decimals), DEMO (18), RWD (18), a DEMO/USDC and a
 * WETH/USDC pair with liquidity, StakingVault (stake DEMO, earn RWD) and the shared Disperse contract; then fund
 * accounts 1..5 and give them every approval the activity generator needs.
 *
 * Transactions are sent one at a time and each receipt is awaited (anvil can hang on concurrent sends in
 * automine mode). On an automining node this takes about a second; with interval mining, one block per tx.
 */
export async function deployDemo({ rpcUrl }: { rpcUrl: string }): Promise<DemoDeployment> {
  const [{ artifacts }, uni] = [await compileDemoContracts(), loadUniswapArtifacts()];
  const c = createDemoClient(rpcUrl);
  const chainId = await c.public.getChainId();
  const from = DEPLOYER;
  const deploy = (artifact: Artifact, args: readonly unknown[] = []) => c.deploy(from, artifact, args);

  const weth = await deploy(uni.weth9);
  const factory = await deploy(uni.factory, [from]);
  const router = await deploy(uni.router, [factory.address, weth.address]);
  const usdc = await deploy(artifacts.DemoToken, ["Demo USD", "USDC", 6, from]);
  const demo = await deploy(artifacts.DemoToken, ["Demo Token", "DEMO", 18, from]);
  const rwd = await deploy(artifacts.DemoToken, ["Reward Token", "RWD", 18, from]);
  const vault = await deploy(artifacts.StakingVault, [demo.address, rwd.address, REWARD_RATE, from]);
  const disperse = await deploy(artifacts.Disperse);

  const token = artifacts.DemoToken.abi;
  const users = [...DEMO_USERS];
  const mint = (address: Address, to: Address, amount: bigint) =>
    c.write({ from, address, abi: token, functionName: "mint", args: [to, amount] });
  await mint(usdc.address, from, DEMO_LIQUIDITY.demoUsdc.usdc + DEMO_LIQUIDITY.wethUsdc.usdc);
  await mint(demo.address, from, DEMO_LIQUIDITY.demoUsdc.demo);
  await mint(rwd.address, vault.address, VAULT_REWARDS);
  const wethNeeded = DEMO_LIQUIDITY.wethUsdc.weth + DEMO_USER_FUNDING.weth * BigInt(users.length);
  await c.write({
    from,
    address: weth.address,
    abi: uni.weth9.abi,
    functionName: "deposit",
    value: wethNeeded,
  });

  const approve = (owner: Address, tokenAddress: Address, spender: Address) =>
    c.write({
      from: owner,
      address: tokenAddress,
      abi: erc20Abi,
      functionName: "approve",
      args: [spender, maxUint256],
    });
  for (const t of [usdc, demo, weth]) await approve(from, t.address, router.address);
  const addLiquidity = (a: Address, b: Address, amountA: bigint, amountB: bigint) =>
    c.write({
      from,
      address: router.address,
      abi: uni.router.abi,
      functionName: "addLiquidity",
      args: [a, b, amountA, amountB, 0n, 0n, from, maxUint256],
    });
  await addLiquidity(demo.address, usdc.address, DEMO_LIQUIDITY.demoUsdc.demo, DEMO_LIQUIDITY.demoUsdc.usdc);
  await addLiquidity(weth.address, usdc.address, DEMO_LIQUIDITY.wethUsdc.weth, DEMO_LIQUIDITY.wethUsdc.usdc);
  const pairOf = async (a: Address, b: Address): Promise<DemoPair> => {
    const address = String(await c.read(factory.address, uni.factory.abi, "getPair", [a, b])).toLowerCase();
    const [token0, token1] = a < b ? [a, b] : [b, a];
    return { address: address as Address, token0, token1 };
  };
  const pairs = {
    demoUsdc: await pairOf(demo.address, usdc.address),
    wethUsdc: await pairOf(weth.address, usdc.address),
  };

  for (const user of users) {
    await mint(usdc.address, user, DEMO_USER_FUNDING.usdc);
    await mint(demo.address, user, DEMO_USER_FUNDING.demo);
    await c.write({
      from,
      address: weth.address,
      abi: erc20Abi,
      functionName: "transfer",
      args: [user, DEMO_USER_FUNDING.weth],
    });
  }
  let endBlock = 0;
  for (const user of users) {
    for (const t of [usdc, demo, weth]) {
      await approve(user, t.address, router.address);
      await approve(user, t.address, disperse.address);
    }
    await approve(user, demo.address, vault.address);
    // LP tokens, so that removeLiquidity through the router works
    await approve(user, pairs.demoUsdc.address, router.address);
    endBlock = Number((await approve(user, pairs.wethUsdc.address, router.address)).blockNumber);
  }
  return assemble();

  function assemble(): DemoDeployment {
    const info = (
      address: Address,
      symbol: DemoTokenSymbol,
      name: string,
      decimals: number,
    ): DemoTokenInfo => ({
      address,
      symbol,
      name,
      decimals,
    });
    return {
      chainId,
      deployer: from,
      users,
      startBlock: weth.block,
      endBlock,
      contracts: {
        weth: weth.address,
        factory: factory.address,
        router: router.address,
        usdc: usdc.address,
        demo: demo.address,
        rwd: rwd.address,
        vault: vault.address,
        disperse: disperse.address,
        pairDemoUsdc: pairs.demoUsdc.address,
        pairWethUsdc: pairs.wethUsdc.address,
      },
      tokens: {
        USDC: info(usdc.address, "USDC", "Demo USD", 6),
        DEMO: info(demo.address, "DEMO", "Demo Token", 18),
        WETH: info(weth.address, "WETH", "Wrapped Ether", 18),
        RWD: info(rwd.address, "RWD", "Reward Token", 18),
      },
      pairs,
      abis: {
        erc20: erc20Abi,
        weth9: uni.weth9.abi,
        factory: uni.factory.abi,
        pair: uni.pair.abi,
        router: uni.router.abi,
        demoToken: artifacts.DemoToken.abi,
        stakingVault: artifacts.StakingVault.abi,
        disperse: artifacts.Disperse.abi,
      },
    };
  }
}
