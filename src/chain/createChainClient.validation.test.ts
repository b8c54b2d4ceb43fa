import type { Hash } from "viem";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type RpcProxy, startRpcProxy } from "../../test/helpers/rpcProxy.ts";
import { type Anvil, startAnvil } from "../demo/anvil.ts";
import { createLogger } from "../internal/logger.ts";
import { testCommon, testConfig } from "./_test/testCommon.ts";
import { classifyRpcError } from "./classifyRpcError.ts";
import { type ChainClient, type ChainClientOptions, createChainClient } from "./createChainClient.ts";
import { InconsistentDataError } from "./errors.ts";

// Answers that contradict themselves are refused and asked again (validateRpcResult, and the batch id
// matching in createEndpoint): through a proxy in front of anvil that rewrites the node's real answers.

const SENDER = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
const DEAD = "0x000000000000000000000000000000000000dead";
// Runtime `PUSH1 0 PUSH1 0 LOG0` twice, then STOP: every call emits two logs (indexes 0 and 1).
const TWO_LOGS_INITCODE = "0x6a60006000a060006000a000600052600b6015f3";
const FAST: ChainClientOptions = { baseDelayMs: 10, maxDelayMs: 50, cooldownMs: 60_000 };

let anvil: Anvil;
let proxy: RpcProxy;
let emitter: Hash;
/** A mined transaction that emitted two logs, its block, and the value sent to DEAD. */
let tx: { hash: Hash; block: bigint; other: Hash };
const opened: ChainClient[] = [];

type Rec = Record<string, unknown> & { logs: Record<string, unknown>[] };

function make(urls: string[], options: ChainClientOptions = FAST) {
  const lines: string[] = [];
  const logger = createLogger({ level: "debug", destination: { write: (line) => lines.push(line) } });
  const common = testCommon(testConfig({ urls }), logger);
  const chain = createChainClient(common, options);
  opened.push(chain);
  return { chain, common, lines };
}

async function send(chain: ChainClient, body: Record<string, unknown>): Promise<Hash> {
  const hash = await chain.request<Hash>("eth_sendTransaction", [{ from: SENDER, ...body }]);
  // anvil may answer the hash just before its automined block is in
  await chain.client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  return hash;
}

beforeAll(async () => {
  anvil = await startAnvil();
  proxy = await startRpcProxy({ upstream: anvil.url });
  const { chain } = make([anvil.url]);
  const deployed = await chain.client.getTransactionReceipt({
    hash: await send(chain, { data: TWO_LOGS_INITCODE }),
  });
  emitter = deployed.contractAddress as Hash;
  const other = await send(chain, { to: DEAD, value: "0x7" });
  const hash = await send(chain, { to: emitter });
  const receipt = await chain.client.getTransactionReceipt({ hash });
  expect(receipt.logs.map((l) => l.logIndex)).toEqual([0, 1]);
  tx = { hash, block: receipt.blockNumber, other };
});
afterAll(async () => {
  await proxy?.close();
  await anvil?.stop();
});
beforeEach(() => {
  proxy.clearFaults();
  proxy.resetCounts();
});
afterEach(() => {
  for (const chain of opened.splice(0)) chain.close();
});

/** The receipt with its second log given the first one's index. */
function repeatLogIndex(result: unknown): unknown {
  const receipts = (Array.isArray(result) ? result : [result]) as Rec[];
  const copy = receipts.map((r) => ({ ...r, logs: r.logs.map((l) => ({ ...l })) }));
  const logs = copy[0]!.logs;
  logs[1]!.logIndex = logs[0]!.logIndex;
  return Array.isArray(result) ? copy : copy[0];
}

const parsed = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe("createChainClient: provider data validation", () => {
  test("behavior: a receipt set repeating a log index is refused, counted, logged and fetched again", async () => {
    const { chain, common, lines } = make([proxy.url]);
    proxy.inject({ kind: "rewrite", method: "eth_getBlockReceipts", rewrite: repeatLogIndex, times: 2 });
    const receipts = await chain.client.getBlockReceipts({ blockNumber: tx.block });
    expect(receipts.flatMap((r) => r.logs.map((l) => l.logIndex))).toEqual([0, 1]);
    expect(proxy.counts.eth_getBlockReceipts).toBe(3);

    const text = await common.metrics.registry.metrics();
    expect(text).toContain(
      'protoscan_rpc_requests_total{method="eth_getBlockReceipts",outcome="inconsistent"} 2',
    );
    expect(text).toContain('protoscan_rpc_requests_total{method="eth_getBlockReceipts",outcome="ok"} 1');
    const warnings = parsed(lines).filter(
      (l) => l.msg === "provider answered with inconsistent data; not used",
    );
    expect(warnings.map((w) => [w.method, w.block, w.attempt, w.error])).toEqual([
      [
        "eth_getBlockReceipts",
        Number(tx.block),
        1,
        `inconsistent provider data: eth_getBlockReceipts returned log index 0 of block ${tx.block} twice`,
      ],
      [
        "eth_getBlockReceipts",
        Number(tx.block),
        2,
        `inconsistent provider data: eth_getBlockReceipts returned log index 0 of block ${tx.block} twice`,
      ],
    ]);
    expect(lines.join("\n")).not.toContain(new URL(proxy.url).port);
  });

  test("error: a provider that keeps answering another transaction's receipt fails the call", async () => {
    const { chain, common } = make([proxy.url], { ...FAST, maxRetries: 3 });
    const other = await chain.request("eth_getTransactionReceipt", [tx.other]);
    proxy.inject({ kind: "rewrite", method: "eth_getTransactionReceipt", rewrite: () => other });
    const error = await chain.client.getTransactionReceipt({ hash: tx.hash }).catch((e: unknown) => e);
    const classified = classifyRpcError(error);
    expect(classified).toBeInstanceOf(InconsistentDataError);
    expect(classified.shortMessage).toBe(
      `inconsistent provider data: eth_getTransactionReceipt asked for ${tx.hash}, got the receipt of ${tx.other}`,
    );
    expect((classified as InconsistentDataError).blockNumber).toBe(tx.block - 1n);
    expect(proxy.counts.eth_getTransactionReceipt).toBe(1 + 4); // the setup call, then 1 + maxRetries
    expect(await common.metrics.registry.metrics()).toContain(
      'protoscan_rpc_requests_total{method="eth_getTransactionReceipt",outcome="inconsistent"} 4',
    );
  });

  test("behavior: a URL that answers inconsistent data is skipped for the next one", async () => {
    const second = await startRpcProxy({ upstream: anvil.url });
    try {
      const { chain } = make([proxy.url, second.url]);
      proxy.inject({
        kind: "rewrite",
        method: "eth_getLogs",
        rewrite: (logs) => (Array.isArray(logs) ? [...logs, logs[0]] : logs),
      });
      const logs = await chain.client.getLogs({ address: emitter, fromBlock: tx.block, toBlock: tx.block });
      expect(logs.map((l) => [l.transactionHash, l.logIndex])).toEqual([
        [tx.hash, 0],
        [tx.hash, 1],
      ]);
      expect([proxy.counts.eth_getLogs, second.counts.eth_getLogs]).toEqual([1, 1]);
    } finally {
      await second.close();
    }
  });

  test("behavior: a block of another number is refused", async () => {
    const { chain } = make([proxy.url]);
    const previous = await chain.request("eth_getBlockByNumber", [
      `0x${(tx.block - 1n).toString(16)}`,
      false,
    ]);
    proxy.inject({ kind: "rewrite", method: "eth_getBlockByNumber", rewrite: () => previous, times: 1 });
    const block = await chain.client.getBlock({ blockNumber: tx.block });
    expect(block.number).toBe(tx.block);
    expect(block.transactions).toEqual([tx.hash]);
  });

  describe("batch answers that cannot be matched to the request ids", () => {
    const shiftIds = (answer: unknown) =>
      Array.isArray(answer) ? answer.map((a: { id: number }) => ({ ...a, id: a.id + 1 })) : answer;
    const repeatFirst = (answer: unknown) =>
      Array.isArray(answer) ? answer.map((a: { id: number }) => ({ ...a, id: answer[0].id })) : answer;

    test.each([
      { name: "ids shifted by one", rewrite: shiftIds },
      { name: "one id answered twice", rewrite: repeatFirst },
    ])("behavior: $name: no call takes a result, all are retried", async ({ rewrite }) => {
      const { chain, common } = make([proxy.url]);
      proxy.inject({ kind: "rewriteBody", rewrite, times: 1 });
      const [sender, dead] = await Promise.all([
        chain.client.getBalance({ address: SENDER }),
        chain.client.getBalance({ address: DEAD }),
      ]);
      expect(dead).toBe(7n);
      expect(sender).toBeGreaterThan(9_000n * 10n ** 18n);
      // the first batch refused as a whole; each call then retried on its own timer
      expect(proxy.batchSizes[0]).toBe(2);
      expect(proxy.counts.eth_getBalance).toBe(4);
      expect(await common.metrics.registry.metrics()).toContain(
        'protoscan_rpc_requests_total{method="eth_getBalance",outcome="inconsistent"} 2',
      );
    });

    test("error: a single answer naming another id", async () => {
      const { chain } = make([proxy.url], { ...FAST, maxRetries: 1 });
      proxy.inject({
        kind: "rewriteBody",
        rewrite: (answer) => ({ ...(answer as object), id: 999 }),
      });
      const error = await chain.request("eth_blockNumber", []).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InconsistentDataError);
      expect((error as InconsistentDataError).shortMessage).toMatch(
        /^inconsistent provider data: the answer does not match the request ids \(the answer names id 999, the request \d+\)$/,
      );
      expect(proxy.counts.eth_blockNumber).toBe(2);
    });
  });
});
