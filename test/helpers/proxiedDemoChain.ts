import { max } from "drizzle-orm";
import { expect } from "vitest";
import { resolveConfig } from "../../src/config/resolveConfig.ts";
import type { Config } from "../../src/config/schema.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../../src/demo/anvil.ts";
import { demoConfigFile } from "../../src/demo/demoConfig.ts";
import { type DemoDeployment, deployDemo } from "../../src/demo/deploy.ts";
import { createLogger } from "../../src/internal/logger.ts";
import type { Db } from "../../src/store/createDatabase.ts";
import { CURSOR_NAME, getCursor } from "../../src/store/indexerState.ts";
import { blocks, transactions } from "../../src/store/schema.ts";
import { createTestDatabase } from "./db.ts";
import { createTestPipeline, type TestPipeline } from "./pipeline.ts";
import { type RpcProxy, startRpcProxy } from "./rpcProxy.ts";
import { verifyStoreAgainstChain } from "./verifyStore.ts";

/**
 * The demo protocols on anvil behind a JSON-RPC proxy that plays faults (test/e2e/faults.test.ts,
 * providerData.test.ts): `busy` transactions 6 per block (eth_getBlockReceipts), then `single` one per block
 * (eth_getTransactionReceipt). `first` is the first generated block, `head` the last.
 */
export type ProxiedDemoChain = {
  anvil: Anvil;
  deployment: DemoDeployment;
  proxy: RpcProxy;
  first: number;
  head: number;
  stop(): Promise<void>;
};

export async function startProxiedDemoChain(shape: {
  busy: number;
  single: number;
}): Promise<ProxiedDemoChain> {
  const anvil = await startAnvil();
  try {
    const deployment = await deployDemo({ rpcUrl: anvil.url });
    const busy = await generateTransactions({
      rpcUrl: anvil.url,
      deployment,
      count: shape.busy,
      perBlock: 6,
    });
    const single = await generateTransactions({
      rpcUrl: anvil.url,
      deployment,
      count: shape.single,
      perBlock: 1,
    });
    const proxy = await startRpcProxy({ upstream: anvil.url });
    return {
      anvil,
      deployment,
      proxy,
      first: busy.fromBlock,
      head: single.toBlock,
      async stop() {
        await proxy.close();
        await anvil.stop();
      },
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

/** A fresh database and pipeline of one test, whose only RPC URL is the proxy; `log` holds its log lines. */
export type ProxiedRun = { config: Config; db: Db; pipeline: TestPipeline; log: string[] };

/**
 * Open a run on `chain`: the scan starts at the first generated block unless told otherwise (runs stay short;
 * every token balance change after it happens in a stored transaction, so `balanceOf` readings must be exact
 * at every committed range end). What to close goes into `cleanups`.
 */
export async function openProxiedRun(
  chain: ProxiedDemoChain,
  cleanups: (() => Promise<void>)[],
  options: { startBlock?: number; logChunkBlocks?: number; timeoutMs?: number } = {},
): Promise<ProxiedRun> {
  const file = demoConfigFile(chain.deployment, { rpcUrl: chain.proxy.url });
  const config = resolveConfig(
    {
      ...file,
      rpc: { ...file.rpc, timeoutMs: options.timeoutMs ?? 10_000 },
      indexer: {
        ...file.indexer,
        startBlock: options.startBlock ?? chain.first,
        logChunkBlocks: options.logChunkBlocks ?? 5000,
      },
    },
    null,
  );
  const database = await createTestDatabase();
  cleanups.push(() => database.cleanup());
  const log: string[] = [];
  const logger = createLogger({ level: "debug", destination: { write: (line) => log.push(line) } });
  const pipeline = await createTestPipeline({ config, database: database.database, logger });
  cleanups.push(() => pipeline.close());
  return { config, db: database.database.db, pipeline, log };
}

/**
 * The store equals the chain from the run's start block up to `toBlock` (checked with plain viem straight
 * against anvil), and every stored transaction was broadcast exactly once. Returns how many are stored.
 */
export async function expectStoreExact(
  chain: ProxiedDemoChain,
  run: ProxiedRun,
  toBlock = chain.head,
): Promise<number> {
  const problems = await verifyStoreAgainstChain({
    rpcUrl: chain.anvil.url,
    db: run.db,
    config: run.config,
    fromBlock: run.config.indexer.startBlock,
    toBlock,
  });
  expect(problems).toEqual([]);
  const rows = await run.db.select({ hash: transactions.hash }).from(transactions);
  const broadcast = run.pipeline.events.flatMap((e) =>
    e.type === "transaction" ? [e.transaction.hash] : [],
  );
  expect([...broadcast].sort()).toEqual(rows.map((r) => r.hash).sort());
  return rows.length;
}

/** Cursor, highest stored transaction block and highest stored header, straight from the database. */
export async function storedUpTo(db: Db) {
  const [tx] = await db.select({ block: max(transactions.blockNumber) }).from(transactions);
  const [header] = await db.select({ block: max(blocks.number) }).from(blocks);
  return {
    cursor: (await getCursor(db, CURSOR_NAME))?.blockNumber ?? null,
    lastTransactionBlock: tx?.block ?? null,
    lastHeader: header?.block ?? null,
  };
}
