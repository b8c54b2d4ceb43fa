import { parseAbi } from "viem";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type RpcProxy, startRpcProxy } from "../../test/helpers/rpcProxy.ts";
import type { Config } from "../config/schema.ts";
import { type Anvil, findFreePort, startAnvil } from "../demo/anvil.ts";
import { ConfigError } from "../internal/errors.ts";
import { ALCHEMY_RATE_BODY } from "./_test/providerMessages.ts";
import { testCommon, testConfig } from "./_test/testCommon.ts";
import { classifyRpcError } from "./classifyRpcError.ts";
import { type ChainClient, type ChainClientOptions, createChainClient } from "./createChainClient.ts";
import { FatalRpcError, RateLimitedError, TransientRpcError } from "./errors.ts";

const SENDER = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
// Runtime `PUSH1 42 PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN` (answers 42 to any call), and one that reverts.
const ANSWER_INITCODE = "0x69602a60005260206000f3600052600a6016f3";
const REVERT_INITCODE = "0x6460006000fd6000526005601bf3";
const FAST: ChainClientOptions = { baseDelayMs: 10, maxDelayMs: 50, cooldownMs: 60_000 };

let anvil: Anvil;
let proxy: RpcProxy;
const opened: ChainClient[] = [];

function make(rpc: Partial<Config["rpc"]> & { urls: string[] }, options: ChainClientOptions = FAST) {
  const common = testCommon(testConfig(rpc));
  const chain = createChainClient(common, options);
  opened.push(chain);
  return { chain, common };
}

async function upstreamBlockNumber(): Promise<bigint> {
  const response = await fetch(anvil.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
  });
  const body = (await response.json()) as { result: string };
  return BigInt(body.result);
}

async function deploy(chain: ChainClient, data: string): Promise<`0x${string}`> {
  const hash = await chain.request<`0x${string}`>("eth_sendTransaction", [{ from: SENDER, data }]);
  // anvil may answer the hash just before its automined block is in
  const receipt = await chain.client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (!receipt.contractAddress) throw new Error("no contract deployed");
  return receipt.contractAddress;
}

beforeAll(async () => {
  anvil = await startAnvil();
  proxy = await startRpcProxy({ upstream: anvil.url });
});
afterAll(async () => {
  await proxy?.close();
  await anvil?.stop();
});
beforeEach(() => {
  proxy.clearFaults();
  proxy.resetCounts();
});
afterEach(async () => {
  for (const chain of opened.splice(0)) chain.close();
});

describe("createChainClient", () => {
  test("default: viem actions go through the pipeline", async () => {
    const { chain, common } = make({ urls: [proxy.url] });
    expect(await chain.getChainId()).toBe(31337);
    const hash = await chain.request<`0x${string}`>("eth_sendTransaction", [
      { from: SENDER, to: "0x000000000000000000000000000000000000dead", value: "0x2a" },
    ]);
    const receipt = await chain.client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    expect(receipt.status).toBe("success");
    expect(receipt.from).toBe(SENDER);
    expect(await chain.client.getBlockNumber()).toBe(await upstreamBlockNumber());
    const block = await chain.client.getBlock({ blockNumber: receipt.blockNumber });
    expect(block.transactions).toContain(hash);
    expect(await chain.client.getBalance({ address: "0x000000000000000000000000000000000000dead" })).toBe(
      42n,
    );
    const answer = await deploy(chain, ANSWER_INITCODE);
    const abi = parseAbi(["function answer() view returns (uint256)"]);
    expect(await chain.client.readContract({ address: answer, abi, functionName: "answer" })).toBe(42n);
    expect(await chain.client.getLogs({ fromBlock: 0n, toBlock: receipt.blockNumber })).toEqual([]);

    const { requests, computeUnits } = chain.stats();
    expect(requests.eth_chainId).toBe(1);
    // One per transaction waited for, and more when anvil mines after viem's first poll (it did under CI's
    // load): how often viem polls is timing; the count must be what reached the node.
    expect(requests.eth_getTransactionReceipt).toBeGreaterThanOrEqual(2);
    expect(requests.eth_getTransactionReceipt).toBe(proxy.counts.eth_getTransactionReceipt);
    // getBlockNumber once, and waitForTransactionReceipt watches block numbers while anvil has not mined yet
    expect(requests.eth_blockNumber).toBeGreaterThanOrEqual(1);
    expect(requests.eth_blockNumber).toBe(proxy.counts.eth_blockNumber);
    expect(requests.eth_getLogs).toBe(1);
    expect(requests.eth_call).toBe(1);
    const expected = Object.entries(requests).reduce((sum, [method, n]) => {
      const price: Record<string, number> = {
        eth_chainId: 0,
        eth_getLogs: 60,
        eth_call: 26,
        eth_blockNumber: 10,
      };
      return sum + n * (price[method] ?? 20);
    }, 0);
    expect(computeUnits).toBe(expected);
    const text = await common.metrics.registry.metrics();
    expect(text).toContain('protoscan_rpc_requests_total{method="eth_getLogs",outcome="ok"} 1');
    expect(text).toContain(`protoscan_rpc_compute_units_total ${expected}`);
    expect(text).not.toContain("127.0.0.1");
    chain.resetStats();
    expect(chain.stats()).toEqual({ requests: {}, computeUnits: 0 });
  });

  test("behavior: concurrent calls share HTTP requests (batching)", async () => {
    const { chain } = make({ urls: [proxy.url], batchSize: 8 });
    const addresses = Array.from(
      { length: 20 },
      (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}` as const,
    );
    const balances = await Promise.all(addresses.map((address) => chain.client.getBalance({ address })));
    expect(balances).toEqual(addresses.map(() => 0n));
    expect(proxy.counts.eth_getBalance).toBe(20);
    expect(proxy.httpRequests).toBe(3);
    expect([...proxy.batchSizes].sort()).toEqual([4, 8, 8]);
  });

  test("behavior: a JSON-RPC error inside a batch fails only that call, which is retried", async () => {
    const { chain } = make({ urls: [proxy.url] });
    proxy.inject({
      kind: "rpcError",
      method: "eth_getBalance",
      code: -32603,
      message: "internal error",
      times: 1,
    });
    const [head, balance] = await Promise.all([
      chain.client.getBlockNumber(),
      chain.client.getBalance({ address: SENDER }),
    ]);
    expect(head).toBe(await upstreamBlockNumber());
    expect(balance).toBeGreaterThan(9_000n * 10n ** 18n);
    expect(proxy.batchSizes[0]).toBe(2);
    expect(proxy.counts.eth_getBalance).toBe(2);
    expect(proxy.counts.eth_blockNumber).toBe(1);
  });

  test("behavior: retries recover after 4 transient failures of different kinds", async () => {
    const { chain, common } = make({ urls: [proxy.url] }, { ...FAST, fetchTimeoutMs: 300 });
    proxy.inject({ kind: "http", status: 502, body: "<html>Bad Gateway</html>", times: 1 });
    proxy.inject({ kind: "drop", times: 1 });
    proxy.inject({ kind: "malformed", times: 1 });
    proxy.inject({ kind: "timeout", times: 1 });
    expect(await chain.client.getBlockNumber()).toBe(await upstreamBlockNumber());
    expect(proxy.counts.eth_blockNumber).toBe(5);
    expect(chain.stats().requests.eth_blockNumber).toBe(5);
    const text = await common.metrics.registry.metrics();
    expect(text).toContain('protoscan_rpc_requests_total{method="eth_blockNumber",outcome="transient"} 4');
    expect(text).toContain('protoscan_rpc_requests_total{method="eth_blockNumber",outcome="ok"} 1');
  });

  test("error: transient failures beyond maxRetries surface", async () => {
    const { chain } = make({ urls: [proxy.url] }, { ...FAST, maxRetries: 2 });
    proxy.inject({ kind: "http", status: 500, body: "Internal Server Error" });
    await expect(chain.request("eth_blockNumber", [])).rejects.toBeInstanceOf(TransientRpcError);
    expect(proxy.counts.eth_blockNumber).toBe(3);
  });

  test("behavior: failover when the first URL refuses connections", async () => {
    const down = `http://127.0.0.1:${await findFreePort()}`;
    const { chain } = make({ urls: [down, proxy.url] });
    expect(await chain.client.getBlockNumber()).toBe(await upstreamBlockNumber());
    expect(await chain.getChainId()).toBe(31337);
    // The refused URL is cooling down: the second call went straight to the proxy.
    expect(chain.stats().requests).toEqual({ eth_blockNumber: 2, eth_chainId: 1 });
    expect(proxy.counts).toEqual({ eth_blockNumber: 1, eth_chainId: 1 });
  });

  test("behavior: failover on 503, and back to the first URL after its cooldown", async () => {
    const second = await startRpcProxy({ upstream: anvil.url });
    try {
      const { chain } = make({ urls: [proxy.url, second.url] }, { ...FAST, cooldownMs: 300 });
      proxy.inject({ kind: "http", status: 503, body: "Service Unavailable" });
      expect(await chain.client.getBlockNumber()).toBe(await upstreamBlockNumber());
      expect(await chain.client.getBlockNumber()).toBe(await upstreamBlockNumber());
      expect(proxy.counts.eth_blockNumber).toBe(1);
      expect(second.counts.eth_blockNumber).toBe(2);
      proxy.clearFaults();
      await new Promise((resolve) => setTimeout(resolve, 350));
      await chain.client.getBlockNumber();
      expect(proxy.counts.eth_blockNumber).toBe(2);
      expect(second.counts.eth_blockNumber).toBe(2);
    } finally {
      await second.close();
    }
  });

  test("behavior: Retry-After is honoured", async () => {
    const { chain } = make({ urls: [proxy.url] });
    proxy.inject({
      kind: "http",
      status: 429,
      headers: { "retry-after": "1" },
      body: ALCHEMY_RATE_BODY,
      times: 1,
    });
    const started = performance.now();
    expect(await chain.client.getBlockNumber()).toBe(await upstreamBlockNumber());
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    expect(elapsed).toBeLessThan(2500);
    expect(proxy.counts.eth_blockNumber).toBe(2);
  });

  test("error: rate limits surface after two retries, for every call of the batch", async () => {
    const { chain } = make({ urls: [proxy.url] });
    // A whole batch answered with one error object and HTTP 200 (Alchemy in batch mode).
    proxy.inject({ kind: "http", status: 200, body: ALCHEMY_RATE_BODY });
    const results = await Promise.allSettled([
      chain.request("eth_blockNumber", []),
      chain.request("eth_chainId", []),
      chain.request("eth_gasPrice", []),
    ]);
    for (const result of results) {
      expect(result.status).toBe("rejected");
      if (result.status === "rejected") expect(result.reason).toBeInstanceOf(RateLimitedError);
    }
    expect(proxy.batchSizes[0]).toBe(3);
    expect(proxy.counts).toEqual({ eth_blockNumber: 3, eth_chainId: 3, eth_gasPrice: 3 });
  });

  test("error: a Retry-After beyond the time budget surfaces at once", async () => {
    const { chain } = make({ urls: [proxy.url] });
    proxy.inject({ kind: "http", status: 429, headers: { "retry-after": "60" }, body: "Too Many Requests" });
    const started = performance.now();
    const error = await chain.request("eth_blockNumber", []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBe(60_000);
    expect(performance.now() - started).toBeLessThan(5_000); // waiting would take 60 s
    expect(proxy.counts.eth_blockNumber).toBe(1);
  });

  test("behavior: requests-per-second ceiling counts every call of a batch", async () => {
    const { chain } = make({ urls: [proxy.url], maxRequestsPerSecond: 10 });
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 25 }, () => chain.request("eth_blockNumber", [])));
    const elapsed = performance.now() - started;
    expect(new Set(results).size).toBe(1);
    // 10 at once (one second's burst), then 15 more at 100 ms intervals.
    expect(elapsed).toBeGreaterThanOrEqual(1400);
    expect(proxy.counts.eth_blockNumber).toBe(25);
    expect(proxy.batchSizes[0]).toBe(10);
    // The other 15 follow as tokens refill: usually one per batch, fewer batches when a loaded machine wakes
    // the timer late (tokens accumulated meanwhile) — the elapsed time above is the ceiling's real proof.
    expect(proxy.batchSizes.reduce((a, b) => a + b, 0)).toBe(25);
    expect(proxy.batchSizes.length).toBeGreaterThanOrEqual(3);
  });

  test("error: assertChainId names the redacted URL", async () => {
    const { chain } = make({ urls: [proxy.url] });
    await expect(chain.assertChainId(31337)).resolves.toBeUndefined();
    const error = await chain.assertChainId(1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(`chain.id is 1 but the RPC at ${proxy.url}/ reports 31337`);
  });

  test("error: a revert through readContract is a FatalRpcError with code 3", async () => {
    const { chain } = make({ urls: [proxy.url] });
    const reverter = await deploy(chain, REVERT_INITCODE);
    const abi = parseAbi(["function answer() view returns (uint256)"]);
    const error = await chain.client
      .readContract({ address: reverter, abi, functionName: "answer" })
      .catch((e) => e);
    const classified = classifyRpcError(error);
    expect(classified).toBeInstanceOf(FatalRpcError);
    expect(classified.code).toBe(3);
    expect(proxy.counts.eth_call).toBe(1);
  });

  test("behavior: shutdown aborts a Retry-After wait", async () => {
    const { chain, common } = make({ urls: [proxy.url] });
    proxy.inject({ kind: "http", status: 429, headers: { "retry-after": "5" }, body: "Too Many Requests" });
    const started = performance.now();
    const pending = chain.request("eth_blockNumber", []).catch((e: unknown) => e);
    setTimeout(() => void common.shutdown.kill(), 200);
    expect(await pending).toBeInstanceOf(RateLimitedError);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(proxy.counts.eth_blockNumber).toBe(1);
  });

  test("error: a closed client refuses calls", async () => {
    const { chain } = make({ urls: [proxy.url] });
    chain.close();
    await expect(chain.request("eth_blockNumber", [])).rejects.toBeInstanceOf(FatalRpcError);
  });
});
