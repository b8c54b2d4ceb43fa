import {
  type Abi,
  createPublicClient,
  encodeDeployData,
  encodeFunctionData,
  type Hex,
  http,
  isHex,
  type PublicClient,
  type TransactionReceipt,
  toHex,
  WaitForTransactionReceiptTimeoutError,
} from "viem";
import type { Address } from "../config/schema.ts";
import { NonRetryableError } from "../internal/errors.ts";
import type { Artifact } from "./compile.ts";

/** A transaction for one of anvil's unlocked accounts to sign. */
export type DemoTx = { from: Address; to?: Address; data?: Hex; value?: bigint; gas?: bigint };

/** The few RPC moves the demo makes, on top of a viem public client. */
export type DemoClient = {
  public: PublicClient;
  /** A raw JSON-RPC call, for methods viem's public schema does not type (`eth_sendTransaction`, `anvil_*`). */
  rpc(method: string, params?: readonly unknown[]): Promise<unknown>;
  /** `eth_sendTransaction` and wait for the receipt; throws when the transaction reverts. */
  send(tx: DemoTx): Promise<TransactionReceipt>;
  /** Call `functionName` on `address` from `from`, wait for the receipt. */
  write(call: {
    from: Address;
    address: Address;
    abi: Abi;
    functionName: string;
    args?: readonly unknown[];
    value?: bigint;
  }): Promise<TransactionReceipt>;
  /** Deploy `artifact` with constructor `args`; returns the lowercase contract address. */
  deploy(
    from: Address,
    artifact: Artifact,
    args?: readonly unknown[],
  ): Promise<{ address: Address; block: number }>;
  /** `eth_call` a view function. */
  read(address: Address, abi: Abi, functionName: string, args?: readonly unknown[]): Promise<unknown>;
};

/** How long `send` waits for a receipt in all. */
const RECEIPT_TIMEOUT_MS = 120_000;
/** A sent transaction not mined after this long is taken for one anvil's automine left out (see `receiptOf`). */
const STALL_MS = 5_000;

/**
 * A client for an anvil node whose dev accounts are unlocked: the node signs (`eth_sendTransaction`), which is
 * much faster than signing in JavaScript. Receipts are polled every 25 ms, so automine chains feel instant.
 */
export function createDemoClient(rpcUrl: string): DemoClient {
  const transport = http(rpcUrl, { retryCount: 0 });
  const client = createPublicClient({ transport, pollingInterval: 25 });
  const rpc = createJsonRpc(rpcUrl);

  const send = async (tx: DemoTx): Promise<TransactionReceipt> => {
    const request = {
      from: tx.from,
      ...(tx.to ? { to: tx.to } : {}),
      ...(tx.data ? { data: tx.data } : {}),
      ...(tx.value !== undefined ? { value: toHex(tx.value) } : {}),
    };
    // Like a wallet, leave headroom over the estimate: it runs at the current block's timestamp, and code
    // that writes time-dependent slots (pair price accumulators, vault rewards) costs more one second later.
    const gas =
      tx.gas ??
      ((await client.estimateGas({
        account: tx.from,
        ...(tx.to ? { to: tx.to } : {}),
        ...(tx.data ? { data: tx.data } : {}),
        ...(tx.value !== undefined ? { value: tx.value } : {}),
      })) *
        3n) /
        2n;
    const hash = await rpc("eth_sendTransaction", [{ ...request, gas: toHex(gas) }]);
    if (!isHex(hash)) throw new NonRetryableError("eth_sendTransaction did not return a transaction hash");
    const receipt = await receiptOf(hash);
    if (receipt.status !== "success") {
      throw new NonRetryableError(`transaction ${hash} reverted`, { details: `to ${tx.to ?? "(create)"}` });
    }
    return receipt;
  };

  /**
   * Wait for `hash`'s receipt. Anvil's automine can leave a ready transaction out of its blocks for good
   * (foundry-rs/foundry#10122): CI once waited 120 s on a deployment that never came. A transaction not mined
   * after `STALL_MS` gets a block of its own (`evm_mine`, which takes what the pool holds), and the wait goes on.
   */
  const receiptOf = async (hash: Hex): Promise<TransactionReceipt> => {
    const deadline = Date.now() + RECEIPT_TIMEOUT_MS;
    for (;;) {
      const timeout = Math.min(STALL_MS, Math.max(1, deadline - Date.now()));
      try {
        return await client.waitForTransactionReceipt({ hash, pollingInterval: 25, timeout });
      } catch (error) {
        if (!(error instanceof WaitForTransactionReceiptTimeoutError) || Date.now() >= deadline) throw error;
        await rpc("evm_mine", []);
      }
    }
  };

  return {
    public: client as PublicClient,
    rpc,
    send,
    write: ({ from, address, abi, functionName, args = [], value }) =>
      send({
        from,
        to: address,
        data: encodeFunctionData({ abi, functionName, args }),
        ...(value !== undefined ? { value } : {}),
      }),
    async deploy(from, artifact, args = []) {
      const data = encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode, args });
      const receipt = await send({ from, data });
      if (!receipt.contractAddress)
        throw new NonRetryableError(`deployment ${receipt.transactionHash} made no contract`);
      return {
        address: receipt.contractAddress.toLowerCase() as Address,
        block: Number(receipt.blockNumber),
      };
    },
    read: (address, abi, functionName, args = []) =>
      client.readContract({ address, abi, functionName, args }),
  };
}

/**
 * A bare JSON-RPC 2.0 caller (https://www.jsonrpc.org/specification) returning `result` as `unknown`, for
 * node-specific methods. An error response throws with the node's message.
 */
export function createJsonRpc(
  rpcUrl: string,
): (method: string, params?: readonly unknown[]) => Promise<unknown> {
  let id = 0;
  return async (method, params = []) => {
    const response = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
    });
    const body: unknown = await response.json();
    if (typeof body !== "object" || body === null)
      throw new NonRetryableError(`${method}: not a JSON-RPC response`);
    if ("error" in body) {
      const error = body.error;
      const message =
        typeof error === "object" && error !== null && "message" in error ? String(error.message) : "";
      throw new NonRetryableError(`${method} failed: ${message}`);
    }
    return "result" in body ? body.result : undefined;
  };
}
