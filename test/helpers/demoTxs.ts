import { encodeFunctionData, erc20Abi, maxUint256 } from "viem";
import type { Address } from "../../src/config/schema.ts";
import type { DemoTx } from "../../src/demo/demoClient.ts";
import type { DemoDeployment, DemoTokenSymbol } from "../../src/demo/deploy.ts";

/**
 * Demo transactions a test names one by one (the activity generator picks them at random). Each carries an
 * explicit gas limit: `anvil_reorg` would otherwise estimate replacement transactions against the latest
 * state, not against the state they will run on.
 */
const GAS = { transfer: 100_000n, swap: 300_000n, vault: 250_000n, mint: 150_000n, native: 21_000n } as const;

/** ERC-20 `transfer` of a demo token between two accounts. */
export function tokenTransfer(
  d: DemoDeployment,
  symbol: DemoTokenSymbol,
  from: Address,
  to: Address,
  amount: bigint,
): DemoTx {
  return {
    from,
    to: d.tokens[symbol].address,
    gas: GAS.transfer,
    data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, amount] }),
  };
}

/** Router `swapExactTokensForTokens` along `path`, proceeds to the sender (approved at deployment). */
export function swapExact(
  d: DemoDeployment,
  user: Address,
  path: readonly DemoTokenSymbol[],
  amountIn: bigint,
): DemoTx {
  return {
    from: user,
    to: d.contracts.router,
    gas: GAS.swap,
    data: encodeFunctionData({
      abi: d.abis.router,
      functionName: "swapExactTokensForTokens",
      args: [amountIn, 0n, path.map((s) => d.tokens[s].address), user, maxUint256],
    }),
  };
}

/** StakingVault `deposit` of DEMO (approved at deployment). */
export function vaultDeposit(d: DemoDeployment, user: Address, amount: bigint): DemoTx {
  return {
    from: user,
    to: d.contracts.vault,
    gas: GAS.vault,
    data: encodeFunctionData({ abi: d.abis.stakingVault, functionName: "deposit", args: [amount] }),
  };
}

/** StakingVault `claim`: pays the sender's RWD rewards (an RWD Transfer when anything accrued). */
export function vaultClaim(d: DemoDeployment, user: Address): DemoTx {
  return {
    from: user,
    to: d.contracts.vault,
    gas: GAS.vault,
    data: encodeFunctionData({ abi: d.abis.stakingVault, functionName: "claim", args: [] }),
  };
}

/** The deployer (token owner) mints a demo token to `to`: a Transfer from the zero address. */
export function ownerMint(d: DemoDeployment, symbol: DemoTokenSymbol, to: Address, amount: bigint): DemoTx {
  return {
    from: d.deployer,
    to: d.tokens[symbol].address,
    gas: GAS.mint,
    data: encodeFunctionData({ abi: d.abis.demoToken, functionName: "mint", args: [to, amount] }),
  };
}

/** A plain ether transfer: touches no configured contract or token. */
export function nativeTransfer(from: Address, to: Address, value: bigint): DemoTx {
  return { from, to, value, gas: GAS.native };
}
