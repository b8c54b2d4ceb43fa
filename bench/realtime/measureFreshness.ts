import type { Hex } from "viem";
import type { DemoDeployment } from "../../src/demo/deploy.ts";
import { NonRetryableError } from "../../src/internal/errors.ts";
import { alchemyAddressActivity, alchemyHeaders } from "../../src/webhooks/_test/fixtures.ts";
import { type BenchChain, exclusiveTransfer, sharedDisperse } from "../_shared/benchChain.ts";
import { BENCH_ALCHEMY_KEY } from "../_shared/startBenchProtoscan.ts";
import type { TxWatcher } from "./createTxWatcher.ts";
import { wallClockMs } from "./latencyStats.ts";

/** Latencies (ms) of one path, and how long the HTTP request itself took (webhook, track-tx). */
export type PathSamples = { latencies: number[]; responses: number[] };

/** How long to wait for one WebSocket message before the run is declared broken. */
const ARRIVAL_TIMEOUT_MS = 15_000;

/**
 * Polling path: one DEMO transfer (an exclusive token) per block, `samples` blocks in a row. Each latency
 * runs from the moment `eth_getTransactionReceipt` first returns the receipt (polled every 10 ms: the
 * earliest a client of the node can know it was mined) to the `transaction` message on the WebSocket.
 * protoscan's 1 s poll sleeps after each cycle, so its phase drifts across the 1 s blocks and the samples
 * sweep the whole poll interval.
 */
export async function measurePolling(
  chain: BenchChain,
  watcher: TxWatcher,
  samples: number,
  progress: (done: number) => void,
): Promise<PathSamples> {
  const pending: Promise<number>[] = [];
  let head = await chain.blockNumber();
  let done = 0;
  for (let i = 0; i < samples; i++) {
    const hash = await chain.send(exclusiveTransfer(chain.deployment, i));
    pending.push(
      (async () => {
        const arrival = watcher.arrival(hash, ARRIVAL_TIMEOUT_MS + 5_000);
        const { seenAt } = await chain.waitForReceipt(hash);
        const latency = (await arrival) - seenAt;
        progress(++done);
        return latency;
      })(),
    );
    head = await chain.waitForBlockAfter(head);
  }
  return { latencies: await Promise.all(pending), responses: [] };
}

/**
 * Mine `count` Disperse calls of WETH (shared contract, non-exclusive token: invisible to polling) in one
 * block and resolve with their hashes and block once every receipt is there.
 */
async function mineShared(
  chain: BenchChain,
  count: number,
  offset: number,
): Promise<{ hashes: Hex[]; block: number }> {
  const txs = Array.from({ length: count }, (_, i) => sharedDisperse(chain.deployment, offset + i));
  const hashes = await chain.sendBatch(txs);
  let block = 0;
  for (const hash of hashes)
    block = Math.max(block, (await chain.waitForReceipt(hash, { pollMs: 50 })).blockNumber);
  return { hashes, block };
}

/**
 * A request path (webhook or track-tx): mine `perBlock` shared-contract transactions at a time, then for each,
 * one after the other, make the request and wait for its WebSocket message. Latency = message arrival -
 * request start; `responses` = response - request start.
 */
async function measureRequests(
  chain: BenchChain,
  watcher: TxWatcher,
  samples: number,
  perBlock: number,
  request: (hash: Hex, block: number) => Promise<void>,
  progress: (done: number) => void,
): Promise<PathSamples> {
  const latencies: number[] = [];
  const responses: number[] = [];
  while (latencies.length < samples) {
    const { hashes, block } = await mineShared(
      chain,
      Math.min(perBlock, samples - latencies.length),
      latencies.length,
    );
    for (const hash of hashes) {
      const start = wallClockMs();
      const arrival = watcher.arrival(hash, ARRIVAL_TIMEOUT_MS);
      await request(hash, block);
      responses.push(wallClockMs() - start);
      latencies.push((await arrival) - start);
      progress(latencies.length);
    }
  }
  return { latencies, responses };
}

/**
 * Webhook path: for each mined Disperse call, POST an Alchemy Notify `ADDRESS_ACTIVITY` delivery for it
 * (the WETH transfer into Disperse and out to the recipient, `token` category, shaped and signed with
 * `X-Alchemy-Signature` as Alchemy does: src/webhooks/_test/fixtures.ts), each with a fresh delivery id.
 */
export async function measureWebhook(
  chain: BenchChain,
  watcher: TxWatcher,
  apiUrl: string,
  options: { samples: number; perBlock: number },
  progress: (done: number) => void,
): Promise<PathSamples> {
  let i = 0;
  return await measureRequests(
    chain,
    watcher,
    options.samples,
    options.perBlock,
    async (hash, block) => {
      const body = JSON.stringify(disperseActivity(chain.deployment, hash, block, i++));
      const response = await fetch(`${apiUrl}/api/webhooks/alchemy`, {
        method: "POST",
        headers: alchemyHeaders(body, BENCH_ALCHEMY_KEY),
        body,
      });
      await response.arrayBuffer();
      if (response.status !== 200)
        throw new NonRetryableError(`webhook delivery answered ${response.status}`);
    },
    progress,
  );
}

/**
 * An Alchemy Notify `ADDRESS_ACTIVITY` delivery (fresh delivery id) for the `i`-th {@link sharedDisperse}
 * call: the WETH transfer from its sender into Disperse and out to its recipient, `token` category, shaped as
 * Alchemy does (src/webhooks/_test/fixtures.ts); `sender` when another account than the `i`-th user sent it.
 * Sign it with `alchemyHeaders(body, BENCH_ALCHEMY_KEY)`.
 */
export function disperseActivity(
  d: DemoDeployment,
  hash: Hex,
  block: number,
  i: number,
  sender?: Hex,
): Record<string, unknown> {
  const from = sender ?? (d.users[i % d.users.length] as Hex);
  const to = d.users[(i + 1) % d.users.length] as Hex;
  const disperse = d.contracts.disperse as Hex;
  const token = {
    category: "token" as const,
    value: 0.001,
    rawValue: 10n ** 15n,
    asset: "WETH",
    contract: d.tokens.WETH.address as Hex,
  };
  return alchemyAddressActivity([
    { ...token, hash, blockNum: block, fromAddress: from, toAddress: disperse, logIndex: 0 },
    { ...token, hash, blockNum: block, fromAddress: disperse, toAddress: to, logIndex: 1 },
  ]);
}

/** Track-tx path: `POST /api/track-tx {"txHash"}` for each mined Disperse call; it must answer 200 indexed. */
export async function measureTrackTx(
  chain: BenchChain,
  watcher: TxWatcher,
  apiUrl: string,
  options: { samples: number; perBlock: number },
  progress: (done: number) => void,
): Promise<PathSamples> {
  return await measureRequests(
    chain,
    watcher,
    options.samples,
    options.perBlock,
    async (hash) => {
      const response = await fetch(`${apiUrl}/api/track-tx`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ txHash: hash }),
      });
      const body = (await response.json()) as { status?: string };
      if (response.status !== 200 || body.status !== "indexed") {
        throw new NonRetryableError(
          `track-tx answered ${response.status} ${JSON.stringify(body).slice(0, 200)}`,
        );
      }
    },
    progress,
  );
}
