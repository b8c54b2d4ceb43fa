import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  type Hash,
  http,
  maxUint256,
  parseEther,
} from "viem";
import type { DemoChain } from "../../../test/helpers/demo.ts";
import { createJsonRpc } from "../../demo/demoClient.ts";

/**
 * Transactions the track-tx tests send on the demo chain, one at a time (anvil's unlocked dev accounts sign).
 * Each returns its hash once mined, or as soon as the node accepted it when automine is off.
 */
export type TrackTxs = {
  /** Disperse ether: reaches only the shared Disperse contract (demovault); polling never sees it. */
  disperseEther(user?: number): Promise<Hash>;
  /**
   * Disperse WETH (a tracked, non-exclusive demoswap token) through Disperse (demovault): it touches both
   * protocols, is attributed to demovault by its `to`, and may be hinted to demoswap.
   */
  disperseWeth(user?: number): Promise<Hash>;
  /** A Router swap DEMO -> USDC: touches demoswap only (and polling sees it). */
  swap(user?: number): Promise<Hash>;
  /** A plain ether transfer between two users: touches nothing configured. */
  unrelated(user?: number): Promise<Hash>;
  /** `evm_setAutomine` */
  setAutomine(on: boolean): Promise<void>;
  /** Mine one block now (`evm_mine`). */
  mine(): Promise<void>;
};

export function trackTxs(chain: DemoChain): TrackTxs {
  const d = chain.deployment;
  const wallet = createWalletClient({ transport: http(chain.anvil.url) });
  const client = createPublicClient({ transport: http(chain.anvil.url), pollingInterval: 25 });
  const rpc = createJsonRpc(chain.anvil.url);
  let automine = true;
  const settle = async (sent: Promise<Hash>): Promise<Hash> => {
    const hash = await sent;
    if (automine) await client.waitForTransactionReceipt({ hash, pollingInterval: 25 });
    return hash;
  };
  const userAt = (i: number) => d.users[i % d.users.length]!;
  const other = (i: number) => d.users[(i + 1) % d.users.length]!;
  const send = (user: number, to: `0x${string}`, data: `0x${string}`, value = 0n, gas = 300_000n) =>
    settle(wallet.sendTransaction({ account: userAt(user), chain: null, to, data, value, gas }));

  return {
    disperseEther: (user = 0) =>
      send(
        user,
        d.contracts.disperse,
        encodeFunctionData({
          abi: d.abis.disperse,
          functionName: "disperseEther",
          args: [[other(user)], [parseEther("0.01")]],
        }),
        parseEther("0.01"),
      ),
    disperseWeth: (user = 0) =>
      send(
        user,
        d.contracts.disperse,
        encodeFunctionData({
          abi: d.abis.disperse,
          functionName: "disperseToken",
          args: [d.tokens.WETH.address, [other(user)], [parseEther("0.001")]],
        }),
      ),
    swap: (user = 0) =>
      send(
        user,
        d.contracts.router,
        encodeFunctionData({
          abi: d.abis.router,
          functionName: "swapExactTokensForTokens",
          args: [
            parseEther("1"),
            0n,
            [d.tokens.DEMO.address, d.tokens.USDC.address],
            userAt(user),
            maxUint256,
          ],
        }),
      ),
    unrelated: (user = 0) =>
      settle(
        wallet.sendTransaction({
          account: userAt(user),
          chain: null,
          to: other(user),
          value: 1n,
          gas: 21_000n,
        }),
      ),
    setAutomine: async (on) => {
      await rpc("evm_setAutomine", [on]);
      automine = on;
    },
    mine: async () => {
      await rpc("evm_mine", []);
    },
  };
}
