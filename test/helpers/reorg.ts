import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicClient, type Hash, type Hex, http, isHex, type PublicClient, toHex } from "viem";
import type { Address } from "../../src/config/schema.ts";
import { createJsonRpc, type DemoTx } from "../../src/demo/demoClient.ts";

/** A block as the chain has it now: number, hash and its transaction hashes in order (all lowercase). */
export type ChainBlock = { number: number; hash: Hash; transactions: Hash[] };

/**
 * A transaction to place in a replacement block: a request anvil signs with an unlocked dev account (its
 * nonce counted from the common ancestor), or a raw signed transaction, e.g. one taken from an orphaned block
 * to mine the very same transaction (same hash) somewhere else.
 */
export type ReorgTransaction = { request: DemoTx } | { raw: Hex };

export type ReorgPlacement = { tx: ReorgTransaction; blockOffset: number };

export type ReorgResult = {
  /** the newest block both chains share */
  ancestor: number;
  /** the blocks the reorg replaced, as they were */
  orphaned: ChainBlock[];
  /** the blocks at the same heights now */
  replacement: ChainBlock[];
};

function publicClient(rpcUrl: string): PublicClient {
  return createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) }) as PublicClient;
}

/** Blocks `from..to` with their transaction hashes. */
export async function readBlocks(rpcUrl: string, from: number, to: number): Promise<ChainBlock[]> {
  const client = publicClient(rpcUrl);
  const numbers = Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
  const blocks = await Promise.all(numbers.map((n) => client.getBlock({ blockNumber: BigInt(n) })));
  return blocks.map((b) => ({
    number: Number(b.number),
    hash: b.hash.toLowerCase() as Hash,
    transactions: b.transactions.map((h) => h.toLowerCase() as Hash),
  }));
}

/** Throw unless every transaction of `blocks` was mined with status 1. */
async function expectAllSucceeded(rpcUrl: string, blocks: readonly ChainBlock[]): Promise<void> {
  const client = publicClient(rpcUrl);
  for (const block of blocks) {
    const receipts = await client.getBlockReceipts({ blockNumber: BigInt(block.number) });
    const failed = receipts.filter((r) => r.status !== "success").map((r) => r.transactionHash);
    if (failed.length > 0) throw new Error(`block ${block.number}: reverted ${failed.join(", ")}`);
  }
}

/**
 * Mine exactly one block holding `txs`, in this order (automine is paused meanwhile), 12 seconds after the
 * previous one so that vault rewards accrue. Throws unless every transaction succeeded in that block.
 */
export async function mineBlock(rpcUrl: string, txs: readonly DemoTx[]): Promise<ChainBlock> {
  const rpc = createJsonRpc(rpcUrl);
  const client = publicClient(rpcUrl);
  const nonces = new Map<Address, number>();
  await rpc("evm_setAutomine", [false]);
  try {
    for (const tx of txs) {
      const nonce =
        nonces.get(tx.from) ?? (await client.getTransactionCount({ address: tx.from, blockTag: "pending" }));
      nonces.set(tx.from, nonce + 1);
      await rpc("eth_sendTransaction", [{ ...toRequest(tx), nonce: toHex(nonce) }]);
    }
    await rpc("evm_increaseTime", [12]);
    await rpc("anvil_mine", [1]);
  } finally {
    await rpc("evm_setAutomine", [true]);
  }
  const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
  const [block] = await readBlocks(rpcUrl, head, head);
  if (!block || block.transactions.length !== txs.length) {
    throw new Error(`mineBlock: ${block?.transactions.length ?? 0} of ${txs.length} transactions mined`);
  }
  await expectAllSucceeded(rpcUrl, [block]);
  return block;
}

/**
 * Replace the last `depth` blocks with as many new ones holding `placements` (offset 0 is the block right
 * after the common ancestor): anvil's `anvil_reorg` (params `[depth, [[tx, blockOffset], …]]`, see foundry
 * `crates/anvil/src/eth/api.rs`). Transactions of the orphaned blocks that are not placed again are gone:
 * anvil does not return them to the pool. Checks that the head number stayed, that every block of the window
 * got a new hash, that each new block holds the transactions placed in it, and that they all succeeded.
 */
export async function reorgChain(
  rpcUrl: string,
  depth: number,
  placements: readonly ReorgPlacement[],
): Promise<ReorgResult> {
  const rpc = createJsonRpc(rpcUrl);
  const client = publicClient(rpcUrl);
  const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
  const ancestor = head - depth;
  const orphaned = await readBlocks(rpcUrl, ancestor + 1, head);
  const pairs = placements.map((p) => ["raw" in p.tx ? p.tx.raw : toRequest(p.tx.request), p.blockOffset]);
  await rpc("anvil_reorg", [depth, pairs]);

  const after = Number(await client.getBlockNumber({ cacheTime: 0 }));
  if (after !== head) throw new Error(`anvil_reorg moved the head from ${head} to ${after}`);
  const replacement = await readBlocks(rpcUrl, ancestor + 1, head);
  replacement.forEach((block, i) => {
    if (block.hash === orphaned[i]!.hash) throw new Error(`block ${block.number} was not replaced`);
    const placed = placements.filter((p) => p.blockOffset === i).length;
    if (block.transactions.length !== placed) {
      throw new Error(`block ${block.number}: ${block.transactions.length} transactions, ${placed} placed`);
    }
  });
  await expectAllSucceeded(rpcUrl, replacement);
  return { ancestor, orphaned, replacement };
}

/** The signed bytes of a mined transaction (`eth_getRawTransactionByHash`). */
export async function rawTransaction(rpcUrl: string, hash: Hash): Promise<Hex> {
  const raw = await createJsonRpc(rpcUrl)("eth_getRawTransactionByHash", [hash]);
  if (!isHex(raw) || raw === "0x") throw new Error(`no raw transaction for ${hash}`);
  return raw;
}

/** Broadcast a signed transaction again (automine mines it at once); returns the block it landed in. */
export async function sendRawTransaction(rpcUrl: string, raw: Hex): Promise<ChainBlock> {
  const hash = await createJsonRpc(rpcUrl)("eth_sendRawTransaction", [raw]);
  if (!isHex(hash)) throw new Error("eth_sendRawTransaction did not return a hash");
  const receipt = await publicClient(rpcUrl).waitForTransactionReceipt({ hash, pollingInterval: 25 });
  if (receipt.status !== "success") throw new Error(`${hash} reverted`);
  const [block] = await readBlocks(rpcUrl, Number(receipt.blockNumber), Number(receipt.blockNumber));
  return block!;
}

function toRequest(tx: DemoTx): Record<string, string> {
  return {
    from: tx.from,
    ...(tx.to ? { to: tx.to } : {}),
    ...(tx.data ? { data: tx.data } : {}),
    ...(tx.value !== undefined ? { value: toHex(tx.value) } : {}),
    ...(tx.gas !== undefined ? { gas: toHex(tx.gas) } : {}),
  };
}

export type HookProxy = {
  /** `http://127.0.0.1:<port>`: forwards every JSON-RPC request to the upstream node unchanged. */
  url: string;
  /** Run `hook` (once) right before the next request that contains a call of `method` is forwarded. */
  beforeNext(method: string, hook: () => Promise<unknown>): void;
  close(): Promise<void>;
};

/**
 * A JSON-RPC pass-through that can act on the chain between two calls of a client, e.g. reorganize it
 * after the indexer read a range's headers and before its `eth_getLogs` reaches the node.
 */
export async function startHookProxy(options: { upstream: string }): Promise<HookProxy> {
  let armed: { method: string; hook: () => Promise<unknown> } | undefined;
  const server = createServer((req, res) => {
    void (async () => {
      try {
        const body = await readBody(req);
        const hook = armed;
        if (hook && callsMethod(body, hook.method)) {
          armed = undefined;
          await hook.hook();
        }
        const upstream = await fetch(options.upstream, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        res.writeHead(upstream.status, { "content-type": "application/json" });
        res.end(await upstream.text());
      } catch (error) {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(error instanceof Error ? error.message : "proxy error");
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    beforeNext(method, hook) {
      armed = { method, hook };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function callsMethod(body: string, method: string): boolean {
  const parsed: unknown = JSON.parse(body);
  const calls: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
  return calls.some((c) => typeof c === "object" && c !== null && "method" in c && c.method === method);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
