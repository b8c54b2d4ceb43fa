import { and, eq } from "drizzle-orm";
import { createWalletClient, encodeFunctionData, erc20Abi, type Hash, http, parseEther } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveConfig } from "../../src/config/resolveConfig.ts";
import type { Config } from "../../src/config/schema.ts";
import { type Activity, generateTransactions, startActivity } from "../../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../../src/demo/anvil.ts";
import { demoConfigFile } from "../../src/demo/demoConfig.ts";
import { type DemoDeployment, deployDemo } from "../../src/demo/deploy.ts";
import { isCatchingUp } from "../../src/indexer/catchingUp.ts";
import {
  DEFERRABLE_INDEXES,
  listDeferredIndexes,
  presentDeferrableIndexes,
} from "../../src/store/deferredIndexes.ts";
import { tokenBalances, transactions } from "../../src/store/schema.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { verifyStoreAgainstChain } from "../helpers/verifyStore.ts";

/** A seeded PRNG so the mixed activity is the same on every run. */
function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

async function mixedActivity(rpcUrl: string, deployment: DemoDeployment, count: number) {
  let seen = 0;
  let activity: Activity | undefined;
  await new Promise<void>((resolve) => {
    activity = startActivity({
      rpcUrl,
      deployment,
      intervalMs: 0,
      random: seeded(42),
      onTransaction: () => {
        if (++seen >= count) resolve();
      },
    });
  });
  await activity?.stop();
}

describe("polling indexer on anvil", () => {
  let anvil: Anvil;
  let deployment: DemoDeployment;
  let config: Config;
  let db: TestDatabase;
  let pipeline: TestPipeline;

  beforeAll(async () => {
    anvil = await startAnvil();
    deployment = await deployDemo({ rpcUrl: anvil.url });
    config = resolveConfig(demoConfigFile(deployment, { rpcUrl: anvil.url }), null);
    await generateTransactions({ rpcUrl: anvil.url, deployment, count: 250, perBlock: 9 });
    await mixedActivity(anvil.url, deployment, 60);
    db = await createTestDatabase();
    // Every first backfill defers the secondary indexes, however short (the default waits for 100 blocks).
    pipeline = await createTestPipeline({ config, database: db.database, deferIndexesMinBlocks: 1 });
  });

  afterAll(async () => {
    await pipeline?.close();
    await db?.cleanup();
    await anvil?.stop();
  });

  /** The deferred indexes each commit of `run` saw, in order (read before the commit). */
  async function deferredAtCommits(
    run: () => Promise<number>,
  ): Promise<{ indexed: number; seen: string[][]; backfilling: boolean[] }> {
    const seen: string[][] = [];
    const backfilling: boolean[] = [];
    const store = pipeline.ingest.store;
    pipeline.ingest.store = async (prepared, options) => {
      backfilling.push(pipeline.indexer.status().backfilling);
      const deferred = await listDeferredIndexes(db.database.db);
      // The gauge says the same as the table at every commit.
      const gauge = (await pipeline.common.metrics.indexerDeferredIndexes.get()).values[0]?.value;
      expect({ deferred, gauge }).toEqual({ deferred, gauge: deferred.length });
      seen.push(deferred);
      return store(prepared, options);
    };
    try {
      return { indexed: await run(), seen, backfilling };
    } finally {
      pipeline.ingest.store = store;
    }
  }

  test("default: the store equals the chain after a backfill", async () => {
    const { indexed, seen, backfilling } = await deferredAtCommits(() => pipeline.catchUp());
    // The first backfill committed without its secondary indexes and built them once caught up.
    expect(seen.length).toBeGreaterThan(1);
    // Its status said "backfilling" at every commit, to the last one (heapWorkFor), and not after it.
    expect(new Set(backfilling)).toEqual(new Set([true]));
    expect(pipeline.indexer.status()).toMatchObject({ running: false, backfilling: false });
    for (const deferred of seen) expect(deferred).toEqual(DEFERRABLE_INDEXES);
    expect(await listDeferredIndexes(db.database.db)).toEqual([]);
    expect((await pipeline.common.metrics.indexerDeferredIndexes.get()).values[0]?.value).toBe(0);
    expect((await presentDeferrableIndexes(db.database.db)).map((i) => i.name)).toEqual(DEFERRABLE_INDEXES);
    const problems = await verifyStoreAgainstChain({
      rpcUrl: anvil.url,
      db: db.database.db,
      config,
      fromBlock: config.indexer.startBlock,
      toBlock: indexed,
    });
    expect(problems).toEqual([]);
    const stored = pipeline.events.filter((e) => e.type === "transaction");
    expect(stored.length).toBeGreaterThan(250);
    // broadcasts come in block order, once per transaction
    const keys = stored.map((e) =>
      e.type === "transaction" ? e.transaction.blockNumber * 1e4 + e.transaction.transactionIndex : 0,
    );
    expect(keys).toEqual([...keys].sort((a, b) => a - b));
    expect(new Set(keys).size).toBe(keys.length);
  });

  test("behavior: a transaction touching only a shared contract is not indexed by polling", async () => {
    const wallet = createWalletClient({ transport: http(anvil.url) });
    const [user, other] = deployment.users as [Hash, Hash];
    const hash = await wallet.sendTransaction({
      account: user,
      chain: null,
      to: deployment.contracts.disperse,
      value: parseEther("0.2"),
      data: encodeFunctionData({
        abi: deployment.abis.disperse,
        functionName: "disperseEther",
        args: [[other], [parseEther("0.2")]],
      }),
    });
    // Mined (and mined well) before the cycle reads the head: otherwise the empty result below proves nothing.
    const receipt = await pipeline.chain.client.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
    await pipeline.catchUp();
    const rows = await db.database.db
      .select()
      .from(transactions)
      .where(eq(transactions.hash, hash.toLowerCase()));
    expect(rows).toEqual([]);
  });

  test("behavior: the verification catches a wrong balance (it can fail)", async () => {
    const [row] = await db.database.db.select().from(tokenBalances).limit(1);
    if (!row) throw new Error("no balances stored");
    const where = and(eq(tokenBalances.tokenAddress, row.tokenAddress), eq(tokenBalances.holder, row.holder));
    await db.database.db
      .update(tokenBalances)
      .set({ balance: row.balance + 1n })
      .where(where);
    const problems = await verifyStoreAgainstChain({
      rpcUrl: anvil.url,
      db: db.database.db,
      config,
      fromBlock: config.indexer.startBlock,
      toBlock: Number(await pipeline.chain.client.getBlockNumber({ cacheTime: 0 })),
    });
    await db.database.db.update(tokenBalances).set({ balance: row.balance }).where(where);
    expect(problems.some((p) => p.startsWith(`balance ${row.tokenAddress}:${row.holder}`))).toBe(true);
  });

  test("behavior: balances of a token not scanned in full follow transfers protoscan never stores", async () => {
    // WETH is tracked but not exclusive: a plain WETH transfer between two users touches nothing configured.
    await pipeline.catchUp();
    const [from, to] = deployment.users as [Hash, Hash];
    const weth = deployment.tokens.WETH.address;
    const wallet = createWalletClient({ transport: http(anvil.url) });
    const hash = await wallet.writeContract({
      account: from,
      chain: null,
      address: weth,
      abi: erc20Abi,
      functionName: "transfer",
      args: [to, parseEther("0.3")],
    });
    expect((await pipeline.chain.client.waitForTransactionReceipt({ hash })).status).toBe("success");
    const indexed = await pipeline.catchUp();
    expect(
      await db.database.db.select().from(transactions).where(eq(transactions.hash, hash.toLowerCase())),
    ).toEqual([]);
    const cached = await db.database.db
      .select()
      .from(tokenBalances)
      .where(and(eq(tokenBalances.tokenAddress, weth), eq(tokenBalances.holder, from.toLowerCase())));
    const onChain = await pipeline.chain.client.readContract({
      address: weth,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [from],
      blockNumber: BigInt(indexed),
    });
    expect(cached[0]?.balance).toBe(onChain);
    const problems = await verifyStoreAgainstChain({
      rpcUrl: anvil.url,
      db: db.database.db,
      config,
      fromBlock: config.indexer.startBlock,
      toBlock: indexed,
    });
    expect(problems).toEqual([]);
  });

  test("behavior: new blocks are picked up by the next cycle", async () => {
    await generateTransactions({ rpcUrl: anvil.url, deployment, count: 30, perBlock: 4 });
    const before = pipeline.events.length;
    const { indexed, seen } = await deferredAtCommits(() => pipeline.catchUp());
    expect(pipeline.events.length - before).toBe(30);
    // Only a first backfill defers indexes.
    expect(seen.length).toBeGreaterThan(0);
    for (const deferred of seen) expect(deferred).toEqual([]);
    expect((await presentDeferrableIndexes(db.database.db)).map((i) => i.name)).toEqual(DEFERRABLE_INDEXES);
    const problems = await verifyStoreAgainstChain({
      rpcUrl: anvil.url,
      db: db.database.db,
      config,
      fromBlock: config.indexer.startBlock,
      toBlock: indexed,
    });
    expect(problems).toEqual([]);
  });

  test("behavior: a restart with nothing left to index reports the stored cursor as indexed, not caught up on nothing", async () => {
    const indexed = await pipeline.catchUp();
    // Another process on the same store (a restart): its first cycle finds the cursor at the target.
    const restarted = await createTestPipeline({ config, database: db.database });
    try {
      expect(restarted.indexer.status().indexedBlock).toBeNull();
      const cycle = await restarted.indexer.runCycle();
      expect(cycle).toMatchObject({ ended: "caught-up", indexedBlock: indexed, stored: 0 });
      const status = restarted.indexer.status();
      expect(status).toMatchObject({ indexedBlock: indexed, lagBlocks: status.chainHead! - indexed });
      expect(isCatchingUp(status, config.indexer.confirmations)).toBe(false);
    } finally {
      await restarted.close();
    }
  });
});
