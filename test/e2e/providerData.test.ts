import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import {
  expectStoreExact,
  openProxiedRun,
  type ProxiedDemoChain,
  type ProxiedRun,
  startProxiedDemoChain,
  storedUpTo,
} from "../helpers/proxiedDemoChain.ts";
import type { RpcFault, RpcProxy } from "../helpers/rpcProxy.ts";

// Issue 8 item 2 through a JSON-RPC proxy that rewrites anvil's real answers into ones that contradict
// themselves (duplicate log indexes, a receipt of another transaction, a block of another number, batch ids
// that do not match) or each other (a log naming a block hash its block does not have). None of it may be
// stored: the indexer refuses, fetches again, and the store ends equal to the chain. A provider that never
// stops lying fails the cycle, and the next cycle resumes from the cursor.

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null;
const blockOf = (params: unknown) => Number((params as unknown[])[0]);
const fullBlock = (params: unknown) => Array.isArray(params) && params[1] === true;
const FAKE_HASH = `0x${"fe".repeat(32)}`;

/** The receipts with the second log given the first one's index (two logs of a block sharing an index). */
function repeatLogIndex(result: unknown): unknown {
  if (!Array.isArray(result)) return result;
  const copy = result.map((r: Json) => ({ ...r, logs: (r.logs as Json[]).map((l) => ({ ...l })) }));
  const all = copy.flatMap((r) => r.logs);
  if (all.length >= 2) all[1]!.logIndex = all[0]!.logIndex;
  return copy;
}

/** eth_getLogs with its first log listed twice. */
const duplicateFirstLog = (result: unknown) => (Array.isArray(result) ? [...result, result[0]] : result);

/** eth_getLogs whose logs of their first block name a hash that block does not have (consistently). */
function fakeFirstBlockHash(result: unknown): unknown {
  if (!Array.isArray(result) || !isRecord(result[0])) return result;
  const block = result[0].blockNumber;
  return result.map((l: Json) => (l.blockNumber === block ? { ...l, blockHash: FAKE_HASH } : l));
}

/** A batch answer whose ids are all shifted by one: every result would land on the wrong call. */
const shiftIds = (answer: unknown) =>
  Array.isArray(answer) ? answer.map((a: Json) => ({ ...a, id: Number(a.id) + 1 })) : answer;

function lines(log: string[]): Json[] {
  return log.map((line) => JSON.parse(line) as Json);
}

type Run = ProxiedRun;

// A fresh database per test: opening PGlite with its migrations alone can take half a minute on a loaded
// machine, hence the generous timeout.
describe("provider data validation", { timeout: 180_000 }, () => {
  let chain: ProxiedDemoChain;
  let proxy: RpcProxy;
  /** 6 blocks of 6 transactions (eth_getBlockReceipts), then 3 blocks of 1 (eth_getTransactionReceipt). */
  let first: number;
  let head: number;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    chain = await startProxiedDemoChain({ busy: 36, single: 3 });
    ({ proxy, first, head } = chain);
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

  /** Calls a `rewrite` was played on; HTTP requests for a `rewriteBody` (played on every call of one). */
  function firings(fault: RpcFault): number {
    const played = proxy.calls.filter((c) => c.fault === fault);
    return fault.kind === "rewriteBody" ? new Set(played.map((c) => c.request)).size : played.length;
  }

  async function inconsistent(run: Run, method: string): Promise<number> {
    const metric = await run.pipeline.common.metrics.rpcRequests.get();
    return metric.values
      .filter((v) => v.labels.method === method && v.labels.outcome === "inconsistent")
      .reduce((sum, v) => sum + v.value, 0);
  }

  test("behavior: lying answers are refused and fetched again; the store equals the chain", async () => {
    const run = await open();
    const faults: RpcFault[] = [
      // within one answer: the chain client refuses it
      { kind: "rewrite", method: "eth_getLogs", rewrite: duplicateFirstLog, times: 1 },
      { kind: "rewrite", method: "eth_getBlockReceipts", rewrite: repeatLogIndex, times: 2 },
      {
        kind: "rewrite",
        method: "eth_getTransactionReceipt",
        rewrite: (r) => (isRecord(r) ? { ...r, transactionHash: FAKE_HASH } : r),
        times: 1,
      },
      {
        kind: "rewrite",
        method: "eth_getBlockByNumber",
        when: fullBlock,
        rewrite: (b) => (isRecord(b) ? { ...b, number: `0x${(Number(b.number) + 1).toString(16)}` } : b),
        times: 1,
      },
      { kind: "rewriteBody", method: "eth_getBlockReceipts", rewrite: shiftIds, times: 1 },
      // across answers: the logs name a hash their block does not have; fetched again like a reorg
      { kind: "rewrite", method: "eth_getLogs", rewrite: fakeFirstBlockHash, times: 1 },
    ];
    for (const fault of faults) proxy.inject(fault);

    const result = await run.pipeline.indexer.runCycle();
    expect(result).toMatchObject({ ended: "caught-up", indexedBlock: head, target: head, reorgs: 1 });
    expect(await expectExact(run)).toBe(result.stored);
    expect(result.stored).toBe(39);
    for (const fault of faults) {
      expect(firings(fault), `${fault.kind} on ${fault.method}`).toBe(fault.times);
    }

    // every answer rewritten within itself was refused and counted, on the method it was sent as
    const crossCall = faults.at(-1);
    for (const method of [
      "eth_getLogs",
      "eth_getBlockReceipts",
      "eth_getTransactionReceipt",
      "eth_getBlockByNumber",
    ]) {
      const lies = proxy.calls.filter((c) => c.method === method && c.fault && c.fault !== crossCall);
      expect(lies.length, method).toBeGreaterThan(0);
      expect(await inconsistent(run, method), method).toBe(lies.length);
    }
    const warned = lines(run.log).filter(
      (l) => l.msg === "provider answered with inconsistent data; not used",
    );
    expect(new Set(warned.map((l) => l.method))).toEqual(
      new Set(["eth_getLogs", "eth_getBlockReceipts", "eth_getTransactionReceipt", "eth_getBlockByNumber"]),
    );
    const logsWarning = warned.find((l) => l.method === "eth_getLogs");
    expect(logsWarning?.error).toBe(
      `inconsistent provider data: eth_getLogs returned log index 0 of block ${logsWarning?.block} twice`,
    );
    expect(Number(logsWarning?.block)).toBeGreaterThanOrEqual(first);
    // the RPC URL is never logged
    expect(run.log.join("\n")).not.toContain(new URL(proxy.url).host);
  });

  test("error: a provider that keeps lying fails the cycle; the next cycle resumes from the cursor", async () => {
    const run = await open({ logChunkBlocks: 3 });
    const chunk = first + 3; // the second chunk: [first + 3, first + 5]
    const lie: RpcFault = {
      kind: "rewrite",
      method: "eth_getBlockReceipts",
      when: (params) => blockOf(params) === chunk + 1,
      rewrite: repeatLogIndex,
    };
    proxy.inject(lie);

    const cut = await run.pipeline.indexer.runCycle();
    expect(cut).toMatchObject({ ended: "error", indexedBlock: chunk - 1, target: head });
    // Nothing of the lying chunk is stored, not even its blocks whose answers were consistent.
    expect(await storedUpTo(run.db)).toEqual({
      cursor: chunk - 1,
      lastTransactionBlock: chunk - 1,
      lastHeader: chunk - 1,
    });
    expect(await expectExact(run, chunk - 1)).toBe(18);
    // 1 + maxRetries (4) attempts, then the call failed the cycle with the reason
    expect(firings(lie)).toBe(5);
    const failed = lines(run.log).find(
      (l) => l.msg === "indexer cycle failed; resuming from the cursor next cycle",
    );
    expect(String(failed?.err)).toContain(
      `inconsistent provider data: eth_getBlockReceipts returned log index 0 of block ${chunk + 1} twice`,
    );

    proxy.clearFaults();
    const next = await run.pipeline.indexer.runCycle();
    expect(next).toMatchObject({ ended: "caught-up", indexedBlock: head, target: head });
    expect(cut.stored + next.stored).toBe(await expectExact(run));
    const resumed = proxy.calls.filter((c) => c.method === "eth_getLogs" && c.fault === undefined);
    expect(resumed.map((c) => Number((c.params as Json[])[0]!.fromBlock))).toContain(chunk);
  });

  test("error: logs that keep naming a hash their block does not have end the cycle after bounded retries", async () => {
    const run = await open({ logChunkBlocks: 3 });
    const chunk = first + 3;
    const lie: RpcFault = {
      kind: "rewrite",
      method: "eth_getLogs",
      when: (params) => Number((params as Json[])[0]!.fromBlock) === chunk,
      rewrite: fakeFirstBlockHash,
    };
    proxy.inject(lie);

    const cut = await run.pipeline.indexer.runCycle();
    expect(cut).toMatchObject({ ended: "error", indexedBlock: chunk - 1 });
    expect(cut.reorgs).toBe(10);
    expect(firings(lie)).toBe(11);
    expect(await storedUpTo(run.db)).toEqual({
      cursor: chunk - 1,
      lastTransactionBlock: chunk - 1,
      lastHeader: chunk - 1,
    });
    expect(await expectExact(run, chunk - 1)).toBe(18);

    proxy.clearFaults();
    const next = await run.pipeline.indexer.runCycle();
    expect(next).toMatchObject({ ended: "caught-up", indexedBlock: head });
    expect(cut.stored + next.stored).toBe(await expectExact(run));
  });
});
