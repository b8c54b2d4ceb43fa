import { decodeEventLog, erc20Abi, maxUint256, parseEther, parseUnits } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Address } from "../config/schema.ts";
import { type Anvil, startAnvil } from "./anvil.ts";
import { createDemoClient, type DemoClient } from "./demoClient.ts";
import { DEMO_LIQUIDITY, DEMO_USER_FUNDING, type DemoDeployment, deployDemo } from "./deploy.ts";
import { DEMO_USERS, DEPLOYER } from "./devAccounts.ts";

let anvil: Anvil;
let d: DemoDeployment;
let c: DemoClient;

beforeAll(async () => {
  anvil = await startAnvil();
  d = await deployDemo({ rpcUrl: anvil.url });
  c = createDemoClient(anvil.url);
});
afterAll(() => anvil?.stop());

const balance = async (token: Address, holder: Address) =>
  (await c.read(token, erc20Abi, "balanceOf", [holder])) as bigint;

describe("deployDemo", () => {
  test("default", async () => {
    expect(d.chainId).toBe(31337);
    expect(d.deployer).toBe(DEPLOYER);
    expect(d.users).toEqual(DEMO_USERS);
    expect(d.startBlock).toBe(1);
    expect(d.endBlock).toBe(Number(await c.public.getBlockNumber({ cacheTime: 0 })));
    for (const address of Object.values(d.contracts)) {
      expect(address).toMatch(/^0x[0-9a-f]{40}$/);
      expect((await c.public.getCode({ address }))?.length).toBeGreaterThan(100);
    }
    expect(new Set(Object.values(d.contracts)).size).toBe(Object.keys(d.contracts).length);
    // a plain serializable object
    expect(JSON.parse(JSON.stringify(d))).toEqual(d);
  });

  test("behavior: token metadata", async () => {
    for (const token of Object.values(d.tokens)) {
      expect(await c.read(token.address, erc20Abi, "symbol")).toBe(token.symbol);
      expect(await c.read(token.address, erc20Abi, "name")).toBe(token.name);
      expect(await c.read(token.address, erc20Abi, "decimals")).toBe(token.decimals);
    }
    expect(d.tokens.USDC).toMatchObject({ name: "Demo USD", decimals: 6 });
    expect(d.tokens.DEMO).toMatchObject({ name: "Demo Token", decimals: 18 });
    expect(d.tokens.WETH.address).toBe(d.contracts.weth);
  });

  test("behavior: pairs hold the initial liquidity", async () => {
    const reserves = async (pair: Address) =>
      (await c.read(pair, d.abis.pair, "getReserves")) as readonly [bigint, bigint, number];
    const [u0, u1] = await reserves(d.pairs.demoUsdc.address);
    // USDC's address sorts before DEMO's
    expect(d.pairs.demoUsdc.token0).toBe(d.tokens.USDC.address);
    expect([u0, u1]).toEqual([DEMO_LIQUIDITY.demoUsdc.usdc, DEMO_LIQUIDITY.demoUsdc.demo]);
    const [w0, w1] = await reserves(d.pairs.wethUsdc.address);
    expect(d.pairs.wethUsdc.token0).toBe(d.tokens.WETH.address);
    expect([w0, w1]).toEqual([DEMO_LIQUIDITY.wethUsdc.weth, DEMO_LIQUIDITY.wethUsdc.usdc]);
    const token0 = (await c.read(d.pairs.demoUsdc.address, d.abis.pair, "token0")) as string;
    expect(token0.toLowerCase()).toBe(d.pairs.demoUsdc.token0);
    expect(String(await c.read(d.contracts.factory, d.abis.factory, "allPairsLength"))).toBe("2");
  });

  test("behavior: users are funded and approved", async () => {
    for (const user of d.users) {
      expect(await balance(d.tokens.USDC.address, user)).toBe(DEMO_USER_FUNDING.usdc);
      expect(await balance(d.tokens.DEMO.address, user)).toBe(DEMO_USER_FUNDING.demo);
      expect(await balance(d.tokens.WETH.address, user)).toBe(DEMO_USER_FUNDING.weth);
      for (const spender of [d.contracts.router, d.contracts.disperse]) {
        expect(await c.read(d.tokens.DEMO.address, erc20Abi, "allowance", [user, spender])).toBe(maxUint256);
      }
      expect(await c.read(d.tokens.DEMO.address, erc20Abi, "allowance", [user, d.contracts.vault])).toBe(
        maxUint256,
      );
    }
    expect(await balance(d.tokens.RWD.address, d.contracts.vault)).toBe(parseUnits("5000000", 18));
  });
});

describe("router", () => {
  test("behavior: a swap changes balances as getAmountsOut says", async () => {
    const user = d.users[0]!;
    const path = [d.tokens.DEMO.address, d.tokens.USDC.address];
    const amountIn = parseUnits("1234.5", 18);
    const amounts = (await c.read(d.contracts.router, d.abis.router, "getAmountsOut", [
      amountIn,
      path,
    ])) as bigint[];
    expect(amounts[0]).toBe(amountIn);
    // ~0.5 USDC per DEMO, less the 0.3% fee and price impact
    expect(amounts[1]).toBeGreaterThan(parseUnits("610", 6));
    expect(amounts[1]).toBeLessThan(parseUnits("617.25", 6));
    const before = [await balance(path[0]!, user), await balance(path[1]!, user)];
    const receipt = await c.write({
      from: user,
      address: d.contracts.router,
      abi: d.abis.router,
      functionName: "swapExactTokensForTokens",
      args: [amountIn, amounts[1], path, user, maxUint256],
    });
    expect(receipt.status).toBe("success");
    expect(await balance(path[0]!, user)).toBe(before[0]! - amountIn);
    expect(await balance(path[1]!, user)).toBe(before[1]! + amounts[1]!);
    // the pair the router computed with its init code hash is the one the factory created
    const swapLog = receipt.logs.find((log) => log.address === d.pairs.demoUsdc.address);
    expect(swapLog).toBeDefined();
  });

  test("behavior: ETH in, through WETH", async () => {
    const user = d.users[1]!;
    const path = [d.tokens.WETH.address, d.tokens.USDC.address];
    const value = parseEther("0.5");
    const amounts = (await c.read(d.contracts.router, d.abis.router, "getAmountsOut", [
      value,
      path,
    ])) as bigint[];
    const before = await balance(d.tokens.USDC.address, user);
    await c.write({
      from: user,
      address: d.contracts.router,
      abi: d.abis.router,
      functionName: "swapExactETHForTokens",
      args: [0n, path, user, maxUint256],
      value,
    });
    expect(await balance(d.tokens.USDC.address, user)).toBe(before + amounts[1]!);
    expect(amounts[1]).toBeGreaterThan(parseUnits("1490", 6)); // ~3000 USDC per ETH
  });
});

describe("StakingVault", () => {
  test("behavior: deposit emits Deposited with the right args", async () => {
    const user = d.users[2]!;
    const amount = parseUnits("750", 18);
    const receipt = await c.write({
      from: user,
      address: d.contracts.vault,
      abi: d.abis.stakingVault,
      functionName: "deposit",
      args: [amount],
    });
    const vaultLogs = receipt.logs.filter((log) => log.address === d.contracts.vault);
    expect(vaultLogs).toHaveLength(1);
    const event = decodeEventLog({ abi: d.abis.stakingVault, ...vaultLogs[0]! });
    expect(event.eventName).toBe("Deposited");
    expect(event.args).toEqual({ user: expect.stringMatching(new RegExp(`^${user}$`, "i")), amount });
    expect(await c.read(d.contracts.vault, d.abis.stakingVault, "balanceOf", [user])).toBe(amount);
    expect(await balance(d.tokens.DEMO.address, d.contracts.vault)).toBe(amount);
  });

  test("behavior: claim pays RWD, withdraw returns the stake", async () => {
    const user = d.users[2]!;
    await c.rpc("evm_increaseTime", [100]);
    const claim = await c.write({
      from: user,
      address: d.contracts.vault,
      abi: d.abis.stakingVault,
      functionName: "claim",
    });
    const claimed = claim.logs
      .filter((log) => log.address === d.contracts.vault)
      .map((log) => decodeEventLog({ abi: d.abis.stakingVault, ...log }));
    expect(claimed.map((e) => e.eventName)).toEqual(["Claimed"]);
    const paid = (claimed[0]!.args as unknown as { amount: bigint }).amount;
    // sole staker at 1 RWD per second for at least 100 s (less integer-division dust)
    expect(paid).toBeGreaterThan(parseUnits("99.99", 18));
    expect(paid).toBeLessThan(parseUnits("110", 18));
    expect(await balance(d.tokens.RWD.address, user)).toBe(paid);

    const withdraw = await c.write({
      from: user,
      address: d.contracts.vault,
      abi: d.abis.stakingVault,
      functionName: "withdraw",
      args: [parseUnits("750", 18)],
    });
    const withdrawn = decodeEventLog({
      abi: d.abis.stakingVault,
      ...withdraw.logs.find((log) => log.address === d.contracts.vault)!,
    });
    expect(withdrawn.eventName).toBe("Withdrawn");
    expect(await balance(d.tokens.DEMO.address, user)).toBe(DEMO_USER_FUNDING.demo);
  });
});

describe("Disperse", () => {
  test("behavior: disperseToken pays every recipient", async () => {
    const recipients: Address[] = [
      "0x000000000000000000000000000000000000d001",
      "0x000000000000000000000000000000000000d002",
    ];
    const amounts = [parseUnits("10", 6), parseUnits("25.5", 6)];
    await c.write({
      from: d.users[3]!,
      address: d.contracts.disperse,
      abi: d.abis.disperse,
      functionName: "disperseToken",
      args: [d.tokens.USDC.address, recipients, amounts],
    });
    expect(await balance(d.tokens.USDC.address, recipients[0]!)).toBe(amounts[0]);
    expect(await balance(d.tokens.USDC.address, recipients[1]!)).toBe(amounts[1]);
    expect(await balance(d.tokens.USDC.address, d.users[3]!)).toBe(
      DEMO_USER_FUNDING.usdc - amounts[0]! - amounts[1]!,
    );
  });
});
