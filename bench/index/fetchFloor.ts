import { createPublicClient, type Hash, http } from "viem";
import { computeUnitsOf } from "../../src/chain/computeUnits.ts";
import type { BenchChain } from "./buildChain.ts";
import type { PhaseMeasurement } from "./phaseResult.ts";
import { mainThreadCpuSeconds } from "./threadCpu.ts";

/**
 * The floor any indexer pays (phase a): the same `eth_getLogs` as protoscan (same address set, same
 * `logChunkBlocks` chunking), then `eth_getTransactionByHash` + `eth_getTransactionReceipt` for every unique
 * transaction hash, with viem's own `http` transport batching (`batchSize` calls per HTTP request) and
 * `concurrency` hashes in flight (sliding windows of one batch each). Nothing is decoded or stored: this is
 * the cost of the bytes alone.
 */
export async function fetchFloor(options: {
  chain: BenchChain;
  addresses: readonly Hash[];
  logChunkBlocks: number;
  batchSize: number;
  concurrency: number;
}): Promise<PhaseMeasurement> {
  const requests: Record<string, number> = {};
  const count = (body: unknown) => {
    for (const call of Array.isArray(body) ? body : [body]) {
      const method = typeof call === "object" && call !== null && "method" in call ? call.method : undefined;
      if (typeof method === "string") requests[method] = (requests[method] ?? 0) + 1;
    }
  };
  const client = createPublicClient({
    transport: http(options.chain.rpcUrl, {
      batch: { batchSize: options.batchSize },
      retryCount: 0,
      // One 5000-block eth_getLogs of a busy range is larger than viem's 10 MB default (protoscan has no cap).
      maxResponseBodySize: false,
      onFetchRequest: (_request, init) => {
        if (typeof init.body === "string") count(JSON.parse(init.body));
      },
    }),
  });

  const started = performance.now();
  const cpu = process.cpuUsage();
  const mainCpu = mainThreadCpuSeconds();
  const { fromBlock, toBlock } = options.chain;
  let transactions = 0;
  let logs = 0;
  let receiptLogs = 0;
  for (let from = fromBlock; from <= toBlock; from += options.logChunkBlocks) {
    const to = Math.min(toBlock, from + options.logChunkBlocks - 1);
    const found = await client.getLogs({
      address: [...options.addresses],
      fromBlock: BigInt(from),
      toBlock: BigInt(to),
    });
    logs += found.length;
    const hashes = [...new Set(found.map((log) => log.transactionHash))];
    // Windows of batchSize / 2 hashes (two calls each: one full JSON-RPC batch), `concurrency` hashes in
    // flight: a new window starts as soon as one is answered, so the node never waits for the slowest.
    const window = Math.max(1, Math.floor(options.batchSize / 2));
    let next = 0;
    const worker = async () => {
      while (next < hashes.length) {
        const part = hashes.slice(next, next + window);
        next += window;
        const fetched = await Promise.all(
          part.map((hash) =>
            Promise.all([client.getTransaction({ hash }), client.getTransactionReceipt({ hash })]),
          ),
        );
        // Use what was fetched (so nothing is optimised away) and check it belongs together.
        for (const [tx, receipt] of fetched) {
          if (tx.hash !== receipt.transactionHash) throw new Error(`receipt does not match ${tx.hash}`);
          receiptLogs += receipt.logs.length;
        }
        transactions += fetched.length;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.ceil(options.concurrency / window)) }, worker));
  }
  const seconds = (performance.now() - started) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  const mainCpuEnd = mainThreadCpuSeconds();
  const computeUnits = Object.entries(requests).reduce((sum, [m, n]) => sum + computeUnitsOf(m) * n, 0);
  return {
    transactions,
    seconds,
    cpuSeconds: (user + system) / 1e6,
    mainThreadCpuSeconds: mainCpu === null || mainCpuEnd === null ? null : mainCpuEnd - mainCpu,
    requests,
    computeUnits,
    setupSeconds: 0,
    notes: `${logs} matching logs, ${receiptLogs} receipt logs`,
  };
}
