import {
  createTestClient,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  isHex,
  maxUint256,
  parseGwei,
  parseUnits,
  toHex,
} from "viem";
import type { Address } from "../config/schema.ts";
import { errorMessage, NonRetryableError } from "../internal/errors.ts";
import type { Logger } from "../internal/logger.ts";
import { type ActivityKind, planAction } from "./activityActions.ts";
import { createDemoClient, type DemoClient } from "./demoClient.ts";
import type { DemoDeployment } from "./deploy.ts";

export type { ActivityKind };

/** One transaction the activity generator got mined. */
export type ActivityEvent = {
  kind: ActivityKind;
  description: string;
  hash: Hex;
  from: Address;
  blockNumber: bigint;
};

export type StartActivityOptions = {
  rpcUrl: string;
  deployment: DemoDeployment;
  /** Pause between two transactions (default 1500 ms). */
  intervalMs?: number;
  logger?: Logger;
  /** Source of randomness in [0, 1) (default Math.random); tests pass a seeded one. */
  random?: () => number;
  /** Called after each mined transaction. */
  onTransaction?: (event: ActivityEvent) => void;
};

export type Activity = {
  /** Stop after the transaction in flight (if any) is mined. Idempotent. */
  stop(): Promise<void>;
};

/**
 * Keep the demo chain busy: every `intervalMs`, one random but realistic transaction from one of accounts 1..5
 * (router swaps both ways and through ETH, add/remove liquidity, vault deposit/withdraw/claim, ERC-20
 * transfers, now and then a Disperse call or a plain ETH transfer), each awaited until mined. Transactions go
 * one at a time: anvil in automine mode can hang on concurrent sends. A failed transaction is logged and
 * the loop goes on.
 */
export function startActivity(options: StartActivityOptions): Activity {
  const { deployment, logger } = options;
  const client = createDemoClient(options.rpcUrl);
  const random = options.random ?? Math.random;
  const intervalMs = options.intervalMs ?? 1500;
  let stopped = false;
  let wake: (() => void) | undefined;

  const loop = async () => {
    while (!stopped) {
      const user = deployment.users[Math.floor(random() * deployment.users.length)]!;
      try {
        const action = await planAction({ client, deployment, random }, user);
        const receipt = await client.send(action.tx);
        const event: ActivityEvent = {
          kind: action.kind,
          description: action.description,
          hash: receipt.transactionHash,
          from: action.tx.from,
          blockNumber: receipt.blockNumber,
        };
        logger?.debug(
          { kind: event.kind, tx: event.hash, block: Number(event.blockNumber) },
          action.description,
        );
        options.onTransaction?.(event);
      } catch (error) {
        if (!stopped) logger?.warn({ err: errorMessage(error) }, "demo activity: transaction failed");
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  const running = loop();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await running;
    },
  };
}

export type GenerateTransactionsOptions = {
  rpcUrl: string;
  deployment: DemoDeployment;
  /** How many successful transactions to mine. */
  count: number;
  /** Transactions per block (default 100). */
  perBlock?: number;
};

export type GeneratedTransactions = { count: number; fromBlock: number; toBlock: number; txHashes: Hex[] };

/** Gas limits set explicitly, so no transaction waits for an estimate against a state that is still moving. */
const GAS = { transfer: 80_000n, swap: 250_000n, deposit: 160_000n } as const;

/**
 * Mine `count` successful transactions fast, for benchmarks: automine is switched off (`evm_setAutomine`),
 * `perBlock` transactions are sent one after the other with explicit nonces and gas, without waiting, then
 * `anvil_mine` mines them; repeat. Accounts 1..5 take turns sending, in a fixed cycle of DEMO and USDC
 * transfers, router swaps both ways and vault deposits. Automine is restored afterwards.
 *
 * Every block in the range is checked with `eth_getBlockReceipts`: it throws unless all `count` transactions
 * were mined and succeeded. Do not run it together with {@link startActivity} on the same accounts.
 */
export async function generateTransactions(
  options: GenerateTransactionsOptions,
): Promise<GeneratedTransactions> {
  const { deployment: d, count } = options;
  const perBlock = Math.max(1, options.perBlock ?? 100);
  const demo = createDemoClient(options.rpcUrl);
  const anvil = createTestClient({ mode: "anvil", transport: http(options.rpcUrl, { retryCount: 0 }) });
  const users = d.users;
  const nonces = await Promise.all(
    users.map((address) => demo.public.getTransactionCount({ address, blockTag: "pending" })),
  );
  const automine = await anvil.getAutomine();
  if (automine) await anvil.setAutomine(false);
  const fromBlock = Number(await demo.public.getBlockNumber({ cacheTime: 0 })) + 1;
  const txHashes: Hex[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const u = i % users.length;
      const tx = benchTransaction(d, Math.floor(i / users.length), users[u]!, users[(u + 1) % users.length]!);
      const hash = await demo.rpc("eth_sendTransaction", [
        {
          ...tx,
          from: users[u]!,
          nonce: toHex(nonces[u]!++),
          gas: toHex(tx.gas),
          maxFeePerGas: toHex(parseGwei("100")),
          maxPriorityFeePerGas: toHex(parseGwei("1")),
        },
      ]);
      if (!isHex(hash)) throw new NonRetryableError("eth_sendTransaction did not return a transaction hash");
      txHashes.push(hash);
      if ((i + 1) % perBlock === 0 || i === count - 1) await mineAll(anvil);
    }
  } finally {
    if (automine) await anvil.setAutomine(true);
  }
  const toBlock = Number(await demo.public.getBlockNumber({ cacheTime: 0 }));
  await checkMined(demo, txHashes, fromBlock, toBlock);
  return { count, fromBlock, toBlock, txHashes };
}

/** Mine until the pool is empty (a block holds at most 30M gas, so a big batch may need more than one). */
async function mineAll(anvil: ReturnType<typeof createTestClient>): Promise<void> {
  for (let round = 0; round < 1000; round++) {
    // Full blocks raise the EIP-1559 base fee by up to 12.5% each; pin it so queued transactions stay valid.
    await anvil.setNextBlockBaseFeePerGas({ baseFeePerGas: parseGwei("1") });
    await anvil.mine({ blocks: 1 });
    const { pending, queued } = await anvil.getTxpoolStatus();
    if (pending + queued === 0) return;
  }
  throw new NonRetryableError("generateTransactions: the transaction pool does not drain");
}

/** `eth_getBlockReceipts` over the range: every one of `hashes` must be there with status 1. */
async function checkMined(
  demo: DemoClient,
  hashes: Hex[],
  fromBlock: number,
  toBlock: number,
): Promise<void> {
  const ours = new Set<string>(hashes);
  let mined = 0;
  for (let block = fromBlock; block <= toBlock; block++) {
    const receipts = await demo.rpc("eth_getBlockReceipts", [toHex(block)]);
    const list: unknown[] = Array.isArray(receipts) ? receipts : [];
    for (const receipt of list) {
      if (typeof receipt !== "object" || receipt === null || !("transactionHash" in receipt)) continue;
      const hash = receipt.transactionHash;
      if (typeof hash !== "string" || !ours.has(hash)) continue;
      if (!("status" in receipt) || receipt.status !== "0x1") {
        throw new NonRetryableError(`generateTransactions: transaction ${hash} reverted`);
      }
      mined++;
    }
  }
  if (mined !== hashes.length) {
    throw new NonRetryableError(`generateTransactions: ${mined} of ${hashes.length} transactions were mined`);
  }
}

/**
 * The `round`-th transaction `from` sends in the benchmark cycle (`next` receives the transfers): DEMO and USDC
 * transfers, router swaps both ways and vault deposits in turn. Also the steady load of `npm run bench:realtime`.
 */
export function benchTransaction(d: DemoDeployment, round: number, from: Address, next: Address) {
  const router = d.contracts.router;
  const swap = (path: Address[], amountIn: bigint) => ({
    to: router,
    gas: GAS.swap,
    data: encodeFunctionData({
      abi: d.abis.router,
      functionName: "swapExactTokensForTokens",
      args: [amountIn, 0n, path, from, maxUint256],
    }),
  });
  const transfer = (token: Address, amount: bigint) => ({
    to: token,
    gas: GAS.transfer,
    data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [next, amount] }),
  });
  switch (round % 5) {
    case 0:
      return transfer(d.tokens.DEMO.address, parseUnits("1", 18));
    case 1:
      return transfer(d.tokens.USDC.address, parseUnits("1", 6));
    case 2:
      return swap([d.tokens.DEMO.address, d.tokens.USDC.address], parseUnits("10", 18));
    case 3:
      return swap([d.tokens.USDC.address, d.tokens.DEMO.address], parseUnits("5", 6));
    default:
      return {
        to: d.contracts.vault,
        gas: GAS.deposit,
        data: encodeFunctionData({
          abi: d.abis.stakingVault,
          functionName: "deposit",
          args: [parseUnits("1", 18)],
        }),
      };
  }
}
