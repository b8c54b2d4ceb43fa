import { encodeFunctionData, erc20Abi, type Hex, isHex, parseGwei, parseUnits, toHex } from "viem";
import type { Address } from "../../src/config/schema.ts";
import { benchTransaction } from "../../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../../src/demo/anvil.ts";
import { createJsonRpc } from "../../src/demo/demoClient.ts";
import { type DemoDeployment, deployDemo } from "../../src/demo/deploy.ts";
import { NonRetryableError } from "../../src/internal/errors.ts";
import { wallClockMs } from "../realtime/latencyStats.ts";

/** A transaction for one of anvil's unlocked dev accounts, with an explicit gas limit. */
export type BenchTx = { from: Address; to: Address; data: Hex; gas: bigint };

/** The demo chain the real-time benchmark runs on: one block per second once set up. */
export type BenchChain = {
  anvil: Anvil;
  deployment: DemoDeployment;
  rpc: (method: string, params?: readonly unknown[]) => Promise<unknown>;
  /** `eth_sendTransaction` (anvil signs; the nonce is the account's next, pending included). */
  send(tx: BenchTx): Promise<Hex>;
  /**
   * Send many transactions in one JSON-RPC batch with explicit consecutive nonces per sender (the pool is
   * not automining, so concurrent sends cannot hang anvil); resolves with their hashes in order.
   */
  sendBatch(txs: readonly BenchTx[]): Promise<Hex[]>;
  /**
   * Poll `eth_getTransactionReceipt` every `pollMs` until the node returns the receipt; resolves with the
   * wall-clock time (ms) it was first seen and the block number. Throws after `timeoutMs`.
   */
  waitForReceipt(
    hash: Hex,
    options?: { pollMs?: number; timeoutMs?: number },
  ): Promise<{ seenAt: number; blockNumber: number }>;
  /** Resolve once the head is past `blockNumber` (polling every 20 ms). */
  waitForBlockAfter(blockNumber: number): Promise<number>;
  blockNumber(): Promise<number>;
};

/** Gas limits set explicitly: an estimate against the state of a block still being filled could fall short. */
const GAS = { transfer: 80_000n, disperse: 150_000n } as const;

/**
 * Start anvil with automine, deploy the demo protocols (fast: one block per transaction, instantly), then
 * switch to interval mining, one block per second (`evm_setIntervalMining`), as a live chain behaves.
 */
export async function startBenchChain(): Promise<BenchChain> {
  const anvil = await startAnvil();
  try {
    const deployment = await deployDemo({ rpcUrl: anvil.url });
    const rpc = createJsonRpc(anvil.url);
    await rpc("evm_setAutomine", [false]);
    await rpc("evm_setIntervalMining", [1]);
    return chainOf(anvil, deployment, rpc);
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

function chainOf(anvil: Anvil, deployment: DemoDeployment, rpc: BenchChain["rpc"]): BenchChain {
  const blockNumber = async () => Number(await rpc("eth_blockNumber"));
  const fees = { maxFeePerGas: toHex(parseGwei("100")), maxPriorityFeePerGas: toHex(parseGwei("1")) };
  return {
    anvil,
    deployment,
    rpc,
    blockNumber,
    async send(tx) {
      const hash = await rpc("eth_sendTransaction", [{ ...tx, gas: toHex(tx.gas), ...fees }]);
      if (!isHex(hash)) throw new NonRetryableError("eth_sendTransaction did not return a transaction hash");
      return hash;
    },
    async sendBatch(txs) {
      const senders = [...new Set(txs.map((tx) => tx.from))];
      const counts = await Promise.all(
        senders.map(async (from) => Number(await rpc("eth_getTransactionCount", [from, "pending"]))),
      );
      const nonces = new Map(senders.map((from, i) => [from, counts[i]!]));
      const body = txs.map((tx, id) => {
        const nonce = nonces.get(tx.from)!;
        nonces.set(tx.from, nonce + 1);
        const params = [{ ...tx, gas: toHex(tx.gas), nonce: toHex(nonce), ...fees }];
        return { jsonrpc: "2.0", id, method: "eth_sendTransaction", params };
      });
      const response = await fetch(anvil.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answers: unknown = await response.json();
      if (!Array.isArray(answers))
        throw new NonRetryableError("a JSON-RPC batch was not answered with an array");
      const hashes: Hex[] = new Array(txs.length);
      for (const answer of answers as { id?: number; result?: unknown; error?: { message?: string } }[]) {
        if (typeof answer.id !== "number" || !isHex(answer.result)) {
          throw new NonRetryableError(
            `eth_sendTransaction failed in a batch: ${answer.error?.message ?? "no hash"}`,
          );
        }
        hashes[answer.id] = answer.result;
      }
      return hashes;
    },
    async waitForReceipt(hash, options = {}) {
      const deadline = Date.now() + (options.timeoutMs ?? 30_000);
      while (Date.now() < deadline) {
        const receipt = await rpc("eth_getTransactionReceipt", [hash]);
        const seenAt = wallClockMs();
        if (typeof receipt === "object" && receipt !== null && "blockNumber" in receipt) {
          if (!("status" in receipt) || receipt.status !== "0x1") {
            throw new NonRetryableError(`benchmark transaction ${hash} reverted`);
          }
          return { seenAt, blockNumber: Number(receipt.blockNumber) };
        }
        await sleep(options.pollMs ?? 10);
      }
      throw new NonRetryableError(`transaction ${hash} was not mined in time`);
    },
    async waitForBlockAfter(after) {
      for (;;) {
        const head = await blockNumber();
        if (head > after) return head;
        await sleep(20);
      }
    },
  };
}

/** A DEMO transfer between two demo users: an exclusive (scanned) token, so the polling indexer sees it. */
export function exclusiveTransfer(d: DemoDeployment, i: number): BenchTx {
  const [from, to] = pair(d, i);
  const data = encodeFunctionData({
    abi: erc20Abi,
    functionName: "transfer",
    args: [to, parseUnits("1", 18)],
  });
  return { from, to: d.tokens.DEMO.address, data, gas: GAS.transfer };
}

/**
 * `Disperse.disperseToken(WETH, [recipient], [0.001 WETH])`: Disperse is a shared contract and WETH a
 * non-exclusive token, so no log of it is scanned: only a webhook or track-tx brings it in.
 */
export function sharedDisperse(d: DemoDeployment, i: number): BenchTx {
  const [from, to] = pair(d, i);
  const data = encodeFunctionData({
    abi: d.abis.disperse,
    functionName: "disperseToken",
    args: [d.tokens.WETH.address, [to], [parseUnits("0.001", 18)]],
  });
  return { from, to: d.contracts.disperse, data, gas: GAS.disperse };
}

/**
 * The `i`-th transaction of the steady protocol load: the demo's benchmark cycle (`benchTransaction` of
 * src/demo/activity.ts: DEMO and USDC transfers, router swaps both ways, vault deposits), every one visible to
 * the polling indexer.
 */
export function protocolTx(d: DemoDeployment, i: number): BenchTx {
  const [from, to] = pair(d, i);
  return { from, ...benchTransaction(d, Math.floor(i / d.users.length), from, to) };
}

/** Sender and recipient of the `i`-th transaction: demo users take turns. */
function pair(d: DemoDeployment, i: number): [Address, Address] {
  const n = d.users.length;
  return [d.users[i % n]!, d.users[(i + 1) % n]!];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
