import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import {
  ALCHEMY_LOGS,
  ALCHEMY_RATE_BODY,
  INFURA_LOGS,
  INFURA_RATE,
  QUICKNODE_RANGE,
} from "../../src/chain/_test/providerMessages.ts";
import { FIRST_RANGE_BLOCKS } from "../../src/chain/logRange.ts";
import type { DemoDeployment } from "../../src/demo/deploy.ts";
import {
  expectStoreExact,
  openProxiedRun,
  type ProxiedDemoChain,
  type ProxiedRun,
  startProxiedDemoChain,
  storedUpTo,
} from "../helpers/proxiedDemoChain.ts";
import type { RecordedCall, RpcFault, RpcProxy } from "../helpers/rpcProxy.ts";

// SPEC §3.1 through a JSON-RPC proxy that plays providers' faults in front of anvil: range refusals shrink
// the eth_getLogs chunk (to the suggested range, or by half) and it grows back; rate limits end the cycle at
// the last committed range and the next cycle resumes there; 5xx, timeouts, dropped connections and per-item
// batch errors are retried inside the cycle. Every case ends with the store compared to the chain.

const hex = (n: number) => `0x${n.toString(16)}`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** The block range of an eth_getLogs call's filter. */
function logRange(params: unknown): { from: number; to: number } {
  const filter: unknown = Array.isArray(params) ? params[0] : undefined;
  if (!isRecord(filter) || typeof filter.fromBlock !== "string" || typeof filter.toBlock !== "string") {
    throw new Error(`not an eth_getLogs filter: ${JSON.stringify(params)}`);
  }
  return { from: Number(filter.fromBlock), to: Number(filter.toBlock) };
}

/** The block number of an eth_getBlockByNumber / eth_getBlockReceipts call. */
function blockOf(params: unknown): number {
  const tag: unknown = Array.isArray(params) ? params[0] : undefined;
  if (typeof tag !== "string") throw new Error(`no block number in ${JSON.stringify(params)}`);
  return Number(tag);
}

/** eth_getBlockByNumber with full transactions (the block fetch of ingestion, not a header read). */
const fullBlock = (params: unknown) => Array.isArray(params) && params[1] === true;

/** How many distinct HTTP requests `fault` was played on. */
function firings(proxy: RpcProxy, fault: RpcFault): number {
  return new Set(proxy.calls.filter((c) => c.fault === fault).map((c) => c.request)).size;
}

/** Wait until the proxy has seen no call for a while: calls a failed cycle abandoned finish their retries. */
async function untilQuiet(proxy: RpcProxy): Promise<void> {
  for (let seen = -1; seen !== proxy.calls.length; ) {
    seen = proxy.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
}

const callKey = (c: RecordedCall) => JSON.stringify([c.method, c.params]);

type Run = ProxiedRun;

describe("indexer through a faulty RPC provider", () => {
  let chain: ProxiedDemoChain;
  let deployment: DemoDeployment;
  let proxy: RpcProxy;
  /** First generated block: 20 blocks of 6 transactions, then 5 blocks of 1 (eth_getTransactionReceipt). */
  let first: number;
  let head: number;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    chain = await startProxiedDemoChain({ busy: 120, single: 5 });
    ({ deployment, proxy, first, head } = chain);
  });

  afterAll(async () => {
    await chain?.stop();
  });

  beforeEach(() => {
    proxy.clearFaults();
    proxy.resetCounts();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const open = (options: Parameters<typeof openProxiedRun>[2] = {}): Promise<Run> =>
    openProxiedRun(chain, cleanups, options);
  const expectExact = (run: Run, toBlock?: number): Promise<number> => expectStoreExact(chain, run, toBlock);

  test("default: a clean run is exact and costs at most 50 compute units per stored transaction", async () => {
    const run = await open({ startBlock: deployment.startBlock }); // the demo config as it is
    const result = await run.pipeline.indexer.runCycle();
    expect(result).toMatchObject({ ended: "caught-up", indexedBlock: head, target: head, reorgs: 0 });
    const count = await expectExact(run);
    expect(count).toBe(result.stored);
    expect(count).toBeGreaterThanOrEqual(125);
    expect(proxy.calls.filter((c) => c.fault !== undefined)).toEqual([]);

    const { computeUnits, requests } = run.pipeline.chain.stats();
    // A first start reads FIRST_RANGE_BLOCKS, then (few logs: src/chain/logRange.ts) the rest in one range.
    const ranges = proxy.calls
      .filter((c) => c.method === "eth_getLogs")
      .map((c) => {
        const [filter] = c.params as [{ fromBlock: string; toBlock: string }];
        return [Number(filter.fromBlock), Number(filter.toBlock)];
      });
    expect(head - deployment.startBlock + 1).toBeGreaterThan(FIRST_RANGE_BLOCKS);
    expect(ranges).toEqual([
      [deployment.startBlock, deployment.startBlock + FIRST_RANGE_BLOCKS - 1],
      [deployment.startBlock + FIRST_RANGE_BLOCKS, head],
    ]);
    expect(requests.eth_getLogs).toBe(2);
    expect(computeUnits / count).toBeLessThanOrEqual(50);
  });

  describe("range refusals on eth_getLogs", () => {
    test.each([
      {
        provider: "Alchemy",
        // suggests [F, F]: one block, then the chunk doubles back to 4
        fault: (f: number) => ({
          code: -32602,
          message: ALCHEMY_LOGS.replace("[0x0, 0x1f3f]", `[${hex(f)}, ${hex(f)}]`),
        }),
        after: [1, 2, 4],
      },
      {
        provider: "Infura",
        fault: (f: number) => ({
          code: -32005,
          message: INFURA_LOGS.replace("[0x1, 0x2f]", `[${hex(f)}, ${hex(f + 2)}]`),
        }),
        after: [3, 4],
      },
      {
        provider: "QuickNode",
        // states a 10,000-block limit, which the refused 4 blocks were already under: halve
        fault: () => ({ code: -32614, message: QUICKNODE_RANGE }),
        after: [2, 4],
      },
    ])(
      "behavior: $provider shrinks the chunk and it grows back to logChunkBlocks",
      async ({ fault, after }) => {
        const run = await open({ logChunkBlocks: 4 });
        const refusedFrom = first + 4; // the second chunk
        proxy.inject({
          kind: "rpcError",
          method: "eth_getLogs",
          times: 1,
          when: (params) => logRange(params).from === refusedFrom,
          ...fault(refusedFrom),
        });

        const result = await run.pipeline.indexer.runCycle();
        expect(result).toMatchObject({ ended: "caught-up", indexedBlock: head, target: head });
        await expectExact(run);

        const ranges = proxy.calls
          .filter((c) => c.method === "eth_getLogs")
          .map((c) => ({ ...logRange(c.params), refused: c.fault !== undefined }));
        expect(ranges.filter((r) => r.refused)).toEqual([
          { from: refusedFrom, to: refusedFrom + 3, refused: true },
        ]);
        const expected: { from: number; to: number; refused: boolean }[] = [];
        let from = first;
        for (const span of [4, ...after]) {
          expected.push({ from, to: from + span - 1, refused: false });
          from += span;
        }
        expect(from + 4).toBeLessThanOrEqual(head); // long enough to see full chunks again
        for (; from <= head; from += 4) expected.push({ from, to: Math.min(from + 3, head), refused: false });
        expect(ranges.filter((r) => !r.refused)).toEqual(expected);
      },
    );
  });

  describe("rate limits", () => {
    // Chunks of 4 blocks from `first`: two are committed, the third [first + 8, first + 11] is refused.
    test.each([
      {
        name: "HTTP 429 (Alchemy body) on eth_getBlockReceipts mid-range",
        fault: (chunk: number): RpcFault => ({
          kind: "http",
          status: 429,
          body: ALCHEMY_RATE_BODY,
          method: "eth_getBlockReceipts",
          when: (params) => blockOf(params) >= chunk + 2,
        }),
        refused: (c: RecordedCall, chunk: number) =>
          c.method === "eth_getBlockReceipts" && blockOf(c.params) === chunk + 2,
      },
      {
        name: "JSON-RPC -32005 (Infura) on eth_getLogs",
        fault: (chunk: number): RpcFault => ({
          kind: "rpcError",
          code: -32005,
          message: INFURA_RATE,
          method: "eth_getLogs",
          when: (params) => logRange(params).from >= chunk,
        }),
        refused: (c: RecordedCall, chunk: number) =>
          c.method === "eth_getLogs" && logRange(c.params).from === chunk,
      },
    ])("error: persistent $name ends the cycle at the last committed range", async ({ fault, refused }) => {
      const run = await open({ logChunkBlocks: 4 });
      const chunk = first + 8;
      const injected = fault(chunk);
      proxy.inject(injected);

      const cut = await run.pipeline.indexer.runCycle();
      expect(cut).toMatchObject({ ended: "rate-limited", indexedBlock: chunk - 1, target: head });
      expect(cut.stored).toBeGreaterThan(0);
      await untilQuiet(proxy);
      // Nothing of the refused range is stored, not even its blocks whose fetch succeeded.
      expect(await storedUpTo(run.db)).toEqual({
        cursor: chunk - 1,
        lastTransactionBlock: chunk - 1,
        lastHeader: chunk - 1,
      });
      expect(await expectExact(run, chunk - 1)).toBe(cut.stored);
      // The client gave up after its rate-limit retries (1 + 2 attempts), not at the first refusal.
      const attempts = proxy.calls.filter((c) => refused(c, chunk));
      expect(attempts.map((c) => c.fault === injected)).toEqual([true, true, true]);

      proxy.clearFaults();
      const next = await run.pipeline.indexer.runCycle();
      expect(next).toMatchObject({ ended: "caught-up", indexedBlock: head, target: head });
      expect(cut.stored + next.stored).toBe(await expectExact(run));
      expect((await storedUpTo(run.db)).cursor).toBe(head);
      // The next cycle resumed at the cursor: the committed chunks were not scanned again.
      const resumed = proxy.calls.filter(
        (c) => c.method === "eth_getLogs" && logRange(c.params).from < chunk,
      );
      expect(resumed.map((c) => logRange(c.params).from)).toEqual([first, first + 4]);
    });
  });

  describe("transient failures are retried inside the cycle", () => {
    const faultSets: { name: string; timeoutMs?: number; faults: RpcFault[] }[] = [
      {
        name: "HTTP 500/502/503 bursts",
        faults: [
          {
            kind: "http",
            status: 500,
            body: "Internal Server Error",
            method: "eth_getBlockByNumber",
            when: fullBlock,
            times: 2,
          },
          {
            kind: "http",
            status: 502,
            body: "<html><body><h1>502 Bad Gateway</h1></body></html>",
            method: "eth_getBlockReceipts",
            times: 1,
          },
          {
            kind: "http",
            status: 503,
            body: '{"error":"service unavailable"}',
            method: "eth_getTransactionReceipt",
            times: 1,
          },
          {
            kind: "http",
            status: 500,
            body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}',
            method: "eth_call",
            times: 1,
          },
        ],
      },
      {
        name: "timeouts",
        timeoutMs: 1000,
        faults: [
          { kind: "timeout", method: "eth_getBlockByNumber", when: fullBlock, times: 1 },
          { kind: "timeout", method: "eth_getBlockReceipts", times: 1 },
          { kind: "timeout", method: "eth_getTransactionReceipt", times: 1 },
          { kind: "timeout", method: "eth_call", times: 1 },
        ],
      },
      {
        name: "dropped connections",
        faults: [
          { kind: "drop", method: "eth_getBlockByNumber", when: fullBlock, times: 1 },
          { kind: "drop", method: "eth_getBlockReceipts", times: 1 },
          { kind: "drop", method: "eth_getTransactionReceipt", times: 1 },
          { kind: "drop", method: "eth_call", times: 1 },
        ],
      },
    ];

    test.each(faultSets)("behavior: $name", async ({ timeoutMs, faults }) => {
      const run = await open(timeoutMs !== undefined ? { timeoutMs } : {});
      for (const fault of faults) proxy.inject(fault);

      const result = await run.pipeline.indexer.runCycle();
      expect(result).toMatchObject({ ended: "caught-up", indexedBlock: head, target: head });
      await expectExact(run);
      // every fault was played, each on as many HTTP requests as it was armed for
      for (const fault of faults) {
        expect(firings(proxy, fault), `${fault.kind} on ${fault.method}`).toBe(fault.times);
      }
    });
  });

  describe("a JSON-RPC error for one call inside a batch", () => {
    test("behavior: only that call is retried and the store is exact", async () => {
      const run = await open();
      const block = first + 5;
      const internal: RpcFault = {
        kind: "rpcError",
        code: -32603,
        message: "internal error",
        method: "eth_getBlockReceipts",
        when: (params) => blockOf(params) === block,
        times: 2,
      };
      const rate: RpcFault = {
        kind: "rpcError",
        code: -32005,
        message: INFURA_RATE,
        method: "eth_getBlockByNumber",
        when: (params) => fullBlock(params) && blockOf(params) === block + 1,
        times: 1,
      };
      proxy.inject(internal);
      proxy.inject(rate);

      const result = await run.pipeline.indexer.runCycle();
      expect(result).toMatchObject({ ended: "caught-up", indexedBlock: head, target: head });
      await expectExact(run);

      const receipts = proxy.calls.filter(
        (c) => c.method === "eth_getBlockReceipts" && blockOf(c.params) === block,
      );
      expect(receipts.map((c) => c.fault === internal)).toEqual([true, true, false]);
      const fetches = proxy.calls.filter(
        (c) => c.method === "eth_getBlockByNumber" && fullBlock(c.params) && blockOf(c.params) === block + 1,
      );
      expect(fetches.map((c) => c.fault === rate)).toEqual([true, false]);
      // The other calls of the batches that carried an error were answered and never sent again.
      const faulted = proxy.calls.filter((c) => c.fault !== undefined);
      expect(faulted).toHaveLength(3);
      const faultedKeys = new Set(faulted.map(callKey));
      const batches = new Set(faulted.map((c) => c.request));
      const neighbours = proxy.calls.filter((c) => batches.has(c.request) && !faultedKeys.has(callKey(c)));
      expect(neighbours.length).toBeGreaterThan(0);
      const sent = new Map<string, number>();
      for (const c of proxy.calls) sent.set(callKey(c), (sent.get(callKey(c)) ?? 0) + 1);
      expect(neighbours.filter((c) => sent.get(callKey(c)) !== 1)).toEqual([]);
    });

    test("error: a non-retryable error for one call ends the cycle before its range is committed", async () => {
      const run = await open({ logChunkBlocks: 4 });
      const chunk = first + 8;
      const fault: RpcFault = {
        kind: "rpcError",
        code: -32602,
        message: "invalid argument 0: hex number with leading zero digits",
        method: "eth_getBlockReceipts",
        when: (params) => blockOf(params) === chunk + 2,
        times: 1,
      };
      proxy.inject(fault);

      const cut = await run.pipeline.indexer.runCycle();
      expect(cut).toMatchObject({ ended: "error", indexedBlock: chunk - 1, target: head });
      await untilQuiet(proxy);
      expect(await storedUpTo(run.db)).toEqual({
        cursor: chunk - 1,
        lastTransactionBlock: chunk - 1,
        lastHeader: chunk - 1,
      });
      expect(firings(proxy, fault)).toBe(1);

      const next = await run.pipeline.indexer.runCycle();
      expect(next).toMatchObject({ ended: "caught-up", indexedBlock: head });
      expect(cut.stored + next.stored).toBe(await expectExact(run));
    });
  });
});
