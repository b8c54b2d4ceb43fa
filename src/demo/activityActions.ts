import { type Abi, encodeFunctionData, erc20Abi, maxUint256, parseEther, parseUnits } from "viem";
import type { Address } from "../config/schema.ts";
import type { DemoClient, DemoTx } from "./demoClient.ts";
import type { DemoDeployment, DemoTokenSymbol } from "./deploy.ts";

/** The kinds of transaction the activity generator sends. */
export type ActivityKind =
  | "swap"
  | "addLiquidity"
  | "removeLiquidity"
  | "deposit"
  | "withdraw"
  | "claim"
  | "transfer"
  | "disperse"
  | "nativeTransfer"
  | "mint"
  | "wrap";

/** One transaction ready to send, and what it is for the logs. */
export type PlannedAction = { kind: ActivityKind; description: string; tx: DemoTx };

export type PlanContext = { client: DemoClient; deployment: DemoDeployment; random: () => number };

const WEIGHTS: [ActivityKind, number][] = [
  ["swap", 30],
  ["transfer", 18],
  ["deposit", 10],
  ["withdraw", 7],
  ["claim", 6],
  ["addLiquidity", 8],
  ["removeLiquidity", 5],
  ["disperse", 6],
  ["nativeTransfer", 10],
];

/** Below these balances a user is topped up (an owner mint, or wrapping ether) before anything else. */
const LOW = {
  USDC: parseUnits("5000", 6),
  DEMO: parseUnits("10000", 18),
  WETH: parseUnits("1", 18),
} as const;

/**
 * Choose one realistic transaction for `user`, reading the balances it depends on so that it succeeds:
 * a swap never spends more than a quarter of a balance, a withdrawal never exceeds the stake, a liquidity
 * removal needs LP tokens. A user running low on a token is first topped up, so the demo can run for days.
 */
export async function planAction(ctx: PlanContext, user: Address): Promise<PlannedAction> {
  const topUp = await planTopUp(ctx, user);
  if (topUp) return topUp;
  const kind = pickWeighted(ctx.random, WEIGHTS);
  const planned = await planKind(ctx, user, kind);
  return planned ?? nativeTransfer(ctx, user);
}

async function planKind(
  ctx: PlanContext,
  user: Address,
  kind: ActivityKind,
): Promise<PlannedAction | undefined> {
  switch (kind) {
    case "swap":
      return await swap(ctx, user);
    case "transfer":
      return await transfer(ctx, user);
    case "deposit":
      return await deposit(ctx, user);
    case "withdraw":
    case "claim": {
      const staked = await stakeOf(ctx, user);
      if (staked === 0n) return await deposit(ctx, user);
      return kind === "claim" ? claim(ctx, user) : withdraw(ctx, user, staked);
    }
    case "addLiquidity":
      return await addLiquidity(ctx, user);
    case "removeLiquidity":
      return (await removeLiquidity(ctx, user)) ?? (await addLiquidity(ctx, user));
    case "disperse":
      return await disperse(ctx, user);
    default:
      return nativeTransfer(ctx, user);
  }
}

async function planTopUp(ctx: PlanContext, user: Address): Promise<PlannedAction | undefined> {
  const { deployment: d } = ctx;
  for (const symbol of ["DEMO", "USDC"] as const) {
    if ((await balanceOf(ctx, symbol, user)) < LOW[symbol]) {
      const amount = LOW[symbol] * 20n;
      return {
        kind: "mint",
        description: `mint ${symbol} to ${user}`,
        tx: call(d.deployer, d.tokens[symbol].address, d.abis.demoToken, "mint", [user, amount]),
      };
    }
  }
  if ((await balanceOf(ctx, "WETH", user)) < LOW.WETH) {
    const tx = call(user, d.contracts.weth, d.abis.weth9, "deposit", []);
    return { kind: "wrap", description: "wrap 10 ETH", tx: { ...tx, value: parseEther("10") } };
  }
  return undefined;
}

async function swap(ctx: PlanContext, user: Address): Promise<PlannedAction | undefined> {
  const { deployment: d, random } = ctx;
  const t = d.tokens;
  const routes: { path: DemoTokenSymbol[]; max: bigint; eth?: "in" | "out" }[] = [
    { path: ["DEMO", "USDC"], max: parseUnits("5000", 18) },
    { path: ["USDC", "DEMO"], max: parseUnits("2500", 6) },
    { path: ["WETH", "USDC"], max: parseUnits("2", 18) },
    { path: ["USDC", "WETH"], max: parseUnits("5000", 6) },
    { path: ["DEMO", "USDC", "WETH"], max: parseUnits("3000", 18) },
    { path: ["WETH", "USDC"], max: parseEther("1"), eth: "in" },
    { path: ["USDC", "WETH"], max: parseUnits("3000", 6), eth: "out" },
  ];
  const route = routes[Math.floor(random() * routes.length)]!;
  const path = route.path.map((s) => t[s].address);
  const spendable = route.eth === "in" ? route.max * 4n : await balanceOf(ctx, route.path[0]!, user);
  const amountIn = randomAmount(random, min(route.max, spendable / 4n));
  if (amountIn === 0n) return undefined;
  const amounts = (await ctx.client.read(d.contracts.router, d.abis.router, "getAmountsOut", [
    amountIn,
    path,
  ])) as readonly bigint[];
  const amountOutMin = ((amounts.at(-1) ?? 0n) * 99n) / 100n; // 1% slippage, as a wallet would set
  const label = `swap ${route.eth === "in" ? "ETH" : route.path[0]} -> ${route.eth === "out" ? "ETH" : route.path.at(-1)}`;
  const router = d.contracts.router;
  if (route.eth === "in") {
    const tx = call(user, router, d.abis.router, "swapExactETHForTokens", [
      amountOutMin,
      path,
      user,
      maxUint256,
    ]);
    return { kind: "swap", description: label, tx: { ...tx, value: amountIn } };
  }
  const fn = route.eth === "out" ? "swapExactTokensForETH" : "swapExactTokensForTokens";
  const tx = call(user, router, d.abis.router, fn, [amountIn, amountOutMin, path, user, maxUint256]);
  return { kind: "swap", description: label, tx };
}

async function transfer(ctx: PlanContext, user: Address): Promise<PlannedAction | undefined> {
  const symbol = pick(ctx.random, ["DEMO", "USDC", "WETH"] as const);
  const amount = randomAmount(ctx.random, (await balanceOf(ctx, symbol, user)) / 100n);
  if (amount === 0n) return undefined;
  const to = recipient(ctx, user);
  const tx = call(user, ctx.deployment.tokens[symbol].address, erc20Abi, "transfer", [to, amount]);
  return { kind: "transfer", description: `transfer ${symbol} to ${to}`, tx };
}

async function deposit(ctx: PlanContext, user: Address): Promise<PlannedAction | undefined> {
  const amount = randomAmount(
    ctx.random,
    min(parseUnits("20000", 18), (await balanceOf(ctx, "DEMO", user)) / 4n),
  );
  if (amount === 0n) return undefined;
  const { deployment: d } = ctx;
  return {
    kind: "deposit",
    description: "vault deposit",
    tx: call(user, d.contracts.vault, d.abis.stakingVault, "deposit", [amount]),
  };
}

function withdraw(ctx: PlanContext, user: Address, staked: bigint): PlannedAction {
  const amount = staked / 2n > 0n ? randomAmount(ctx.random, staked) : staked;
  const { deployment: d } = ctx;
  return {
    kind: "withdraw",
    description: "vault withdraw",
    tx: call(user, d.contracts.vault, d.abis.stakingVault, "withdraw", [amount]),
  };
}

function claim(ctx: PlanContext, user: Address): PlannedAction {
  const { deployment: d } = ctx;
  return {
    kind: "claim",
    description: "vault claim",
    tx: call(user, d.contracts.vault, d.abis.stakingVault, "claim", []),
  };
}

async function addLiquidity(ctx: PlanContext, user: Address): Promise<PlannedAction | undefined> {
  const { deployment: d, random } = ctx;
  const base = pick(random, ["DEMO", "WETH"] as const);
  const amountA = randomAmount(random, (await balanceOf(ctx, base, user)) / 20n);
  // Offer a generous quote side: the router takes the amounts that match the pool's ratio.
  const amountB = (await balanceOf(ctx, "USDC", user)) / 4n;
  if (amountA === 0n || amountB === 0n) return undefined;
  const args = [d.tokens[base].address, d.tokens.USDC.address, amountA, amountB, 0n, 0n, user, maxUint256];
  return {
    kind: "addLiquidity",
    description: `add ${base}/USDC liquidity`,
    tx: call(user, d.contracts.router, d.abis.router, "addLiquidity", args),
  };
}

async function removeLiquidity(ctx: PlanContext, user: Address): Promise<PlannedAction | undefined> {
  const { deployment: d, random } = ctx;
  const base = pick(random, ["DEMO", "WETH"] as const);
  const pair = base === "DEMO" ? d.pairs.demoUsdc : d.pairs.wethUsdc;
  const lp = (await ctx.client.read(pair.address, erc20Abi, "balanceOf", [user])) as bigint;
  const liquidity = randomAmount(random, lp);
  if (liquidity === 0n) return undefined;
  const args = [d.tokens[base].address, d.tokens.USDC.address, liquidity, 0n, 0n, user, maxUint256];
  return {
    kind: "removeLiquidity",
    description: `remove ${base}/USDC liquidity`,
    tx: call(user, d.contracts.router, d.abis.router, "removeLiquidity", args),
  };
}

async function disperse(ctx: PlanContext, user: Address): Promise<PlannedAction | undefined> {
  const { deployment: d, random } = ctx;
  const symbol = pick(random, ["DEMO", "USDC"] as const);
  const budget = (await balanceOf(ctx, symbol, user)) / 100n;
  const count = 2 + Math.floor(random() * 4);
  const recipients = Array.from({ length: count }, () => recipient(ctx, user));
  const amounts = recipients.map(() => randomAmount(random, budget / BigInt(count)));
  if (amounts.some((a) => a === 0n)) return undefined;
  const args = [d.tokens[symbol].address, recipients, amounts];
  return {
    kind: "disperse",
    description: `disperse ${symbol} to ${count}`,
    tx: call(user, d.contracts.disperse, d.abis.disperse, "disperseToken", args),
  };
}

function nativeTransfer(ctx: PlanContext, user: Address): PlannedAction {
  const to = recipient(ctx, user);
  const value = randomAmount(ctx.random, parseEther("0.5"));
  return {
    kind: "nativeTransfer",
    description: `send ETH to ${to}`,
    tx: { from: user, to, value: value === 0n ? 1n : value },
  };
}

function call(from: Address, to: Address, abi: Abi, functionName: string, args: readonly unknown[]): DemoTx {
  return { from, to, data: encodeFunctionData({ abi, functionName, args }) };
}

async function balanceOf(ctx: PlanContext, symbol: DemoTokenSymbol, holder: Address): Promise<bigint> {
  return (await ctx.client.read(ctx.deployment.tokens[symbol].address, erc20Abi, "balanceOf", [
    holder,
  ])) as bigint;
}

async function stakeOf(ctx: PlanContext, user: Address): Promise<bigint> {
  const { deployment: d } = ctx;
  return (await ctx.client.read(d.contracts.vault, d.abis.stakingVault, "balanceOf", [user])) as bigint;
}

/** Another demo user most of the time, otherwise a brand-new address (so holder lists grow). */
function recipient(ctx: PlanContext, user: Address): Address {
  const others = ctx.deployment.users.filter((u) => u !== user);
  if (ctx.random() < 0.65 && others.length > 0) return pick(ctx.random, others);
  let hex = "";
  while (hex.length < 40)
    hex += Math.floor(ctx.random() * 0x100000000)
      .toString(16)
      .padStart(8, "0");
  return `0x${hex.slice(0, 40)}`;
}

/** A random amount between 5% and 100% of `max` (0 when `max` is 0). */
function randomAmount(random: () => number, max: bigint): bigint {
  if (max <= 0n) return 0n;
  const fraction = BigInt(Math.floor((0.05 + random() * 0.95) * 10_000));
  return (max * fraction) / 10_000n;
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function pickWeighted<T>(random: () => number, weighted: readonly [T, number][]): T {
  const total = weighted.reduce((sum, [, w]) => sum + w, 0);
  let r = random() * total;
  for (const [item, w] of weighted) {
    r -= w;
    if (r < 0) return item;
  }
  return weighted.at(-1)![0];
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
