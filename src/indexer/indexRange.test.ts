import { eq, inArray, sql } from "drizzle-orm";
import { type Hash, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../../test/helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../../test/helpers/pipeline.ts";
import { type RpcProxy, startRpcProxy } from "../../test/helpers/rpcProxy.ts";
import { verifyStoreAgainstChain } from "../../test/helpers/verifyStore.ts";
import { resolveConfig } from "../config/resolveConfig.ts";
import type { Config } from "../config/schema.ts";
import { generateTransactions } from "../demo/activity.ts";
import { demoConfigFile } from "../demo/demoConfig.ts";
import { deltaTokensOf, refreshCallBalances } from "../ingest/_test/balances.ts";
import { swapTransaction } from "../realtime/_test/fixtures.ts";
import { commitBatch } from "../store/commitBatch.ts";
import { getCursor } from "../store/indexerState.ts";
import { blocks, transactions } from "../store/schema.ts";
import { scannedAddresses } from "./createIndexer.ts";
import { indexRange, openRange, type RangeDeps, splitGroups } from "./indexRange.ts";

const CURSOR = "range-test";

describe("indexRange", () => {
  let demo: DemoChain;
  let proxy: RpcProxy;
  let config: Config;
  let head: number;

  beforeAll(async () => {
    demo = await setupDemoChain();
    proxy = await startRpcProxy({ upstream: demo.anvil.url });
    config = resolveConfig(demoConfigFile(demo.deployment, { rpcUrl: proxy.url }), null);
    // 60 protocol transactions, 3 per block: 20 blocks with logs on top of the deployment's.
    head = (
      await generateTransactions({
        rpcUrl: demo.anvil.url,
        deployment: demo.deployment,
        count: 60,
        perBlock: 3,
      })
    ).toBlock;
  });

  afterAll(async () => {
    await proxy?.close();
    await demo?.anvil.stop();
  });

  async function setup(overrides: Partial<RangeDeps> = {}): Promise<{
    db: TestDatabase;
    pipeline: TestPipeline;
    deps: RangeDeps;
    commits: number[][];
  }> {
    const db = await createTestDatabase();
    const pipeline = await createTestPipeline({ config, database: db.database });
    const commits: number[][] = [];
    const deps: RangeDeps = {
      chain: pipeline.chain,
      db: db.database.db,
      ingest: pipeline.ingest,
      addresses: scannedAddresses(pipeline.common),
      filterHash: "test",
      cursorName: CURSOR,
      blocksPerCommit: 4,
      onCommitted: (cursor, inserted) => commits.push([cursor, inserted]),
      ...overrides,
    };
    return { db, pipeline, deps, commits };
  }

  /** What the store has that the chain does not, or the other way round, for blocks [from, head]. */
  const mismatches = (db: TestDatabase, from: number) =>
    verifyStoreAgainstChain({
      rpcUrl: demo.anvil.url,
      db: db.database.db,
      config,
      fromBlock: from,
      toBlock: head,
    });

  /** The blocks of [startBlock, head] with a scanned log, in order. */
  async function blocksWithLogs(pipeline: TestPipeline, deps: RangeDeps): Promise<number[]> {
    const all = await pipeline.chain.client.getLogs({
      address: [...deps.addresses],
      fromBlock: BigInt(config.indexer.startBlock),
      toBlock: BigInt(head),
    });
    return [...new Set(all.map((l) => Number(l.blockNumber)))].sort((a, b) => a - b);
  }

  async function storedBlocks(db: TestDatabase): Promise<number[]> {
    const rows = await db.database.db.execute<{ n: string }>(
      sql`select distinct block_number as n from transactions order by 1`,
    );
    return rows.rows.map((r) => Number(r.n));
  }

  test("default: groups of blocks committed in order, each with its cursor; the store equals the chain", async () => {
    const { db, pipeline, deps, commits } = await setup();
    try {
      const from = config.indexer.startBlock;
      const inserted = await indexRange(deps, from, head);
      const blocks = await storedBlocks(db);
      // one commit per 4 blocks with logs, the last one at the range end
      expect(commits.length).toBe(Math.ceil(blocks.length / 4));
      expect(commits.map(([cursor]) => cursor)).toEqual([
        ...blocks.filter((_, i) => i % 4 === 3 && i < blocks.length - 1),
        head,
      ]);
      expect(commits.reduce((sum, [, n]) => sum + n!, 0)).toBe(inserted);
      expect(inserted).toBeGreaterThanOrEqual(60);
      expect((await getCursor(db.database.db, CURSOR))?.blockNumber).toBe(head);
      // what the indexer does once a cycle caught up: call-mode tokens also move in transactions not stored
      await refreshCallBalances(config, pipeline.chain, db.database.db, head);
      expect(await mismatches(db, from)).toEqual([]);
      // broadcasts still come once per transaction, in block order
      const keys = pipeline.events.flatMap((e) =>
        e.type === "transaction" ? [e.transaction.blockNumber * 1e4 + e.transaction.transactionIndex] : [],
      );
      expect(keys).toEqual([...keys].sort((a, b) => a - b));
      expect(keys.length).toBe(inserted);
    } finally {
      await pipeline.close();
      await db.cleanup();
    }
  });

  test("transactionsPerCommit bounds a group; the range's last group reads every call-mode balance again", async () => {
    // At most 7 transactions per group: many groups of a few blocks each.
    const { db, pipeline, deps, commits } = await setup({ blocksPerCommit: 100, transactionsPerCommit: 7 });
    try {
      const from = config.indexer.startBlock;
      await indexRange(deps, from, head);
      const logs = await pipeline.chain.client.getLogs({
        address: [...deps.addresses],
        fromBlock: BigInt(from),
        toBlock: BigInt(head),
      });
      const byBlock = new Map<number, { hashes: Set<Hash> }>();
      for (const log of logs) {
        const entry = byBlock.get(Number(log.blockNumber)) ?? { hashes: new Set<Hash>() };
        entry.hashes.add(log.transactionHash!);
        byBlock.set(Number(log.blockNumber), entry);
      }
      const expected = splitGroups(byBlock, 100, 7);
      expect(expected.length).toBeGreaterThan(5);
      expect(commits.map(([cursor]) => cursor)).toEqual([
        ...expected.slice(0, -1).map((g) => g.at(-1)),
        head,
      ]);
      // No refreshCallBalances here: the last group read every call-mode holder again at the range end.
      const callMode = await db.database.db.execute<{ block_number: string }>(
        sql`select b.block_number from token_balances b join token_state s using (token_address)
            where s.balance_mode = 'call'`,
      );
      expect(callMode.rows.length).toBeGreaterThan(0);
      expect(new Set(callMode.rows.map((r) => Number(r.block_number)))).toEqual(new Set([head]));
      expect(await mismatches(db, from)).toEqual([]);
    } finally {
      await pipeline.close();
      await db.cleanup();
    }
  });

  test("ready: the first commit waits for it, and nothing is committed when it fails", async () => {
    const from = config.indexer.startBlock;
    const { db, pipeline, deps, commits } = await setup();
    try {
      let commitsWhenReady: number | undefined;
      const ready = new Promise<void>((resolve) => setTimeout(resolve, 1000)).then(() => {
        commitsWhenReady = commits.length;
      });
      await indexRange({ ...deps, ready }, from, head);
      expect(commitsWhenReady).toBe(0);
      expect(commits.length).toBeGreaterThan(1);
      expect((await getCursor(db.database.db, CURSOR))?.blockNumber).toBe(head);
    } finally {
      await pipeline.close();
      await db.cleanup();
    }

    const failure = new Error("the indexes could not be dropped");
    const failed = await setup();
    try {
      // As the indexer does: the failure is observed by the range, not left unhandled until then.
      const ready = Promise.reject(failure);
      ready.catch(() => undefined);
      await expect(indexRange({ ...failed.deps, ready }, from, head)).rejects.toBe(failure);
      expect(failed.commits).toEqual([]);
      expect(await getCursor(failed.db.database.db, CURSOR)).toBeNull();
      expect(await storedBlocks(failed.db)).toEqual([]);
    } finally {
      await failed.pipeline.close();
      await failed.db.cleanup();
    }
  });

  test("behavior: blocks webhooks stored ahead of the cursor: an orphaned one is rolled back, a canonical one stays", async () => {
    const { db, pipeline, deps } = await setup();
    try {
      const from = config.indexer.startBlock;
      const withLogs = new Set(await blocksWithLogs(pipeline, deps));
      // Two blocks without a scanned log (deployments of the demo) and one with logs, in another group.
      const [quiet, stale] = Array.from({ length: head - from + 1 }, (_, i) => from + i).filter(
        (n) => !withLogs.has(n),
      );
      expect(stale).toBeDefined();
      const busy = [...withLogs][6]!;
      const canonical = await pipeline.chain.client.getBlock({ blockNumber: BigInt(quiet!) });
      const orphan = swapTransaction({
        hash: `0x${"0f".repeat(32)}`,
        blockNumber: busy,
        blockHash: `0x${"0e".repeat(32)}`,
      });
      await commitBatch(db.database.db, {
        source: "webhook",
        transactions: [orphan],
        blocks: [
          { number: busy, hash: orphan.blockHash, parentHash: orphan.blockHash, timestamp: new Date() },
          {
            number: quiet!,
            hash: canonical.hash.toLowerCase(),
            parentHash: canonical.parentHash.toLowerCase(),
            timestamp: new Date(Number(canonical.timestamp) * 1000),
          },
          {
            number: stale!,
            hash: `0x${"0d".repeat(32)}`,
            parentHash: orphan.blockHash,
            timestamp: new Date(),
          },
        ],
        deltaTokens: await deltaTokensOf(config, pipeline.chain, db.database.db),
      });

      await indexRange(deps, from, head);
      expect((await getCursor(db.database.db, CURSOR))?.blockNumber).toBe(head);
      const stored = await db.database.db
        .select({ number: blocks.number, hash: blocks.hash })
        .from(blocks)
        .where(inArray(blocks.number, [quiet!, stale!, busy]))
        .orderBy(blocks.number);
      const busyHash = (await pipeline.chain.client.getBlock({ blockNumber: BigInt(busy) })).hash;
      // The orphaned headers are gone (a block without a scanned log is not stored again), the canonical stays.
      expect(stored).toEqual([
        { number: quiet, hash: canonical.hash.toLowerCase() },
        { number: busy, hash: busyHash.toLowerCase() },
      ]);
      const removed = pipeline.events.flatMap((e) => (e.type === "removed" ? [e.removed.hash] : []));
      expect(removed).toEqual([orphan.hash]);
      await refreshCallBalances(config, pipeline.chain, db.database.db, head);
      expect(await mismatches(db, from)).toEqual([]);
    } finally {
      await pipeline.close();
      await db.cleanup();
    }
  });

  /** The chain's blocks in two ranges, the second opened after the first as the indexer does. */
  function openTwoRanges(deps: RangeDeps) {
    const from = config.indexer.startBlock;
    const middle = Math.floor((from + head) / 2);
    proxy.resetCounts();
    const first = openRange(deps, from, middle);
    const second = openRange(deps, middle + 1, head, {
      after: first.fetched,
      startGroups: first.allPreparing,
    });
    return { from, middle, first, second };
  }

  test("openRange: the next range's logs are fetched before the current one commits", async () => {
    const { db, pipeline, deps, commits } = await setup();
    try {
      const { from, middle, first, second } = openTwoRanges(deps);
      // Both ranges' logs come in before anything is committed (the second range's groups start once the
      // first range's are all under way, during its commit).
      await second.fetched;
      const logRanges = proxy.calls
        .filter((c) => c.method === "eth_getLogs")
        .map((c) => (c.params as [{ fromBlock: string; toBlock: string }])[0])
        .map((f) => [Number(f.fromBlock), Number(f.toBlock)]);
      expect(logRanges).toEqual([
        [from, middle],
        [middle + 1, head],
      ]);
      expect(commits).toEqual([]);
      expect(await getCursor(db.database.db, CURSOR)).toBeNull();

      const inserted = (await first.commit()) + (await second.commit());
      expect(commits.at(-1)?.[0]).toBe(head);
      expect(inserted).toBe(commits.reduce((sum, [, n]) => sum + n!, 0));
      await refreshCallBalances(config, pipeline.chain, db.database.db, head);
      expect(await mismatches(db, from)).toEqual([]);
    } finally {
      await pipeline.close();
      await db.cleanup();
    }
  });

  test("openRange: a range opened after one whose logs are refused asks for nothing, and is given up", async () => {
    const { db, pipeline, deps, commits } = await setup();
    try {
      proxy.inject({
        kind: "rpcError",
        code: -32602,
        message: "invalid params",
        method: "eth_getLogs",
        times: 1,
      });
      const { first, second } = openTwoRanges(deps);
      await expect(first.commit()).rejects.toThrow();
      await second.abandon();
      await expect(second.fetched).rejects.toThrow();
      expect(proxy.calls.filter((c) => c.method === "eth_getLogs")).toHaveLength(1);
      expect(proxy.counts.eth_getBlockReceipts ?? 0).toBe(0);
      expect(commits).toEqual([]);
    } finally {
      proxy.clearFaults();
      await pipeline.close();
      await db.cleanup();
    }
  });

  test("error: a failure mid-range keeps the committed groups, and indexing resumes after them", async () => {
    const { db, pipeline, deps, commits } = await setup();
    try {
      const from = config.indexer.startBlock;
      const withLogs = await blocksWithLogs(pipeline, deps);
      const failing = withLogs[9]!; // in the third group of four
      proxy.inject({
        kind: "rpcError",
        code: -32602,
        message: "invalid params",
        method: "eth_getBlockByNumber",
        when: (params) => Array.isArray(params) && params[0] === toHex(failing) && params[1] === true,
      });
      await expect(indexRange(deps, from, head)).rejects.toThrow();
      proxy.clearFaults();

      const cursor = (await getCursor(db.database.db, CURSOR))?.blockNumber;
      expect(cursor).toBe(withLogs[7]); // the end of the second group
      expect(commits.map(([c]) => c)).toEqual([withLogs[3], withLogs[7]]);
      expect(await storedBlocks(db)).toEqual(withLogs.slice(0, 8));
      const beyond = await db.database.db
        .select({ hash: transactions.hash })
        .from(transactions)
        .where(eq(transactions.blockNumber, failing));
      expect(beyond).toEqual([]);

      await indexRange(deps, cursor! + 1, head);
      expect((await getCursor(db.database.db, CURSOR))?.blockNumber).toBe(head);
      // what the indexer does once a cycle caught up: call-mode tokens also move in transactions not stored
      await refreshCallBalances(config, pipeline.chain, db.database.db, head);
      expect(await mismatches(db, from)).toEqual([]);
      const hashes = pipeline.events.flatMap((e) =>
        e.type === "transaction" ? [e.transaction.hash as Hash] : [],
      );
      expect(new Set(hashes).size).toBe(hashes.length);
    } finally {
      proxy.clearFaults();
      await pipeline.close();
      await db.cleanup();
    }
  });
});

describe("splitGroups", () => {
  const blocks = (counts: Record<number, number>) =>
    new Map(
      Object.entries(counts).map(([n, c]) => [
        Number(n),
        { hashes: new Set(Array.from({ length: c }, (_, i) => `0x${n}${i}` as Hash)) },
      ]),
    );

  test("blocks in order, cut at maxBlocks blocks or before maxTransactions would be passed", () => {
    expect(splitGroups(blocks({ 5: 1, 1: 1, 3: 1, 9: 1, 7: 1 }), 2, 100)).toEqual([[1, 3], [5, 7], [9]]);
    expect(splitGroups(blocks({ 1: 3, 2: 3, 3: 3, 4: 1 }), 100, 7)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(splitGroups(blocks({ 1: 4, 2: 3, 3: 1 }), 100, 7)).toEqual([[1, 2], [3]]);
  });

  test("a block with more transactions than maxTransactions is a group of its own", () => {
    expect(splitGroups(blocks({ 1: 1, 2: 50, 3: 1 }), 100, 10)).toEqual([[1], [2], [3]]);
  });

  test("no block: no group", () => {
    expect(splitGroups(new Map(), 100, 10)).toEqual([]);
  });
});
