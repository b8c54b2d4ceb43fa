import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { count, inArray } from "drizzle-orm";
import { type Hash, parseUnits } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startProtoscan } from "../../src/cli/startProtoscan.ts";
import { resolveConfig } from "../../src/config/resolveConfig.ts";
import type { Config, ConfigFile } from "../../src/config/schema.ts";
import { createJsonRpc } from "../../src/demo/demoClient.ts";
import { writeDemoConfig } from "../../src/demo/demoConfig.ts";
import { assertStoreOnChain } from "../../src/indexer/assertStoreOnChain.ts";
import { ChainMismatchError } from "../../src/indexer/errors.ts";
import { REORG_WINDOW_BLOCKS } from "../../src/indexer/findCommonAncestor.ts";
import { createSilentLogger } from "../../src/internal/logger.ts";
import type { Db } from "../../src/store/createDatabase.ts";
import { CURSOR_NAME, getCursor } from "../../src/store/indexerState.ts";
import { transactions } from "../../src/store/schema.ts";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { tokenTransfer } from "../helpers/demoTxs.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { type CliProcess, spawnProtoscan } from "../helpers/processes.ts";
import { verifyStoreAgainstChain } from "../helpers/verifyStore.ts";

/** tsx compiling the sources on a loaded 2-core machine can take many seconds before protoscan answers. */
const STARTUP_MS = 90_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A JSON-RPC forwarder whose upstream node can be swapped: "the RPC now serves another chain". */
async function startSwitchableRpc(upstream: string) {
  let target = upstream;
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    try {
      const answer = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: Buffer.concat(chunks),
      });
      const body = Buffer.from(await answer.arrayBuffer());
      response.writeHead(answer.status, { "content-type": "application/json" }).end(body);
    } catch {
      response.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    switchTo(url: string) {
      target = url;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function until<T>(read: () => Promise<T | null>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await read().catch(() => null);
    if (value !== null) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function storedCount(db: Db): Promise<number> {
  const [row] = await db.select({ n: count() }).from(transactions);
  return row?.n ?? 0;
}

describe("a database indexed from another chain", () => {
  /** the chain the database is indexed from */
  let chainA: DemoChain;
  /** the same protocols on another chain (another genesis time, so no block hash is shared) */
  let chainB: DemoChain;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let headA: number;
  const cleanups: (() => Promise<void>)[] = [];

  const configOn = (chain: DemoChain, rpcUrl: string, extra: Partial<ConfigFile["indexer"]> = {}): Config =>
    resolveConfig(
      {
        ...chain.configFile,
        rpc: { ...chain.configFile.rpc, urls: [rpcUrl] },
        indexer: { ...chain.configFile.indexer, ...extra },
        api: { ...chain.configFile.api, rateLimitPerMinute: 100_000 },
      },
      null,
    );

  beforeAll(async () => {
    chainA = await setupDemoChain();
    chainB = await setupDemoChain({ anvil: { extraArgs: ["--timestamp", "1600000000"] } });
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config: chainA.config, database: db.database });
    await pipeline.catchUp();
  });

  afterAll(async () => {
    await pipeline?.close();
    for (const cleanup of cleanups.reverse()) await cleanup();
    await db?.cleanup();
    await chainA?.anvil.stop();
    await chainB?.anvil.stop();
  });

  test("behavior: a reorg onto a shorter chain is rolled back, not an error", async () => {
    const url = chainA.anvil.url;
    const rpc = createJsonRpc(url);
    const [u1, u2, u3] = chainA.deployment.users as [Hash, Hash, Hash];
    const snapshot = await rpc("evm_snapshot");
    const orphaned: Hash[] = [];
    for (const to of [u2, u3, u2]) {
      orphaned.push(
        (await rpc("eth_sendTransaction", [
          toRequest(tokenTransfer(chainA.deployment, "DEMO", u1, to, parseUnits("3", 18))),
        ])) as Hash,
      );
    }
    await until(() => rpc("eth_getTransactionReceipt", [orphaned[2]]), 30_000, "the transfers to be mined");
    const before = await pipeline.catchUp();
    expect(await storedIn(orphaned)).toHaveLength(3);

    // The chain goes back three blocks and grows by one: the cursor is now beyond the head.
    expect(await rpc("evm_revert", [snapshot])).toBe(true);
    const replacing = (await rpc("eth_sendTransaction", [
      toRequest(tokenTransfer(chainA.deployment, "USDC", u1, u3, parseUnits("4", 6))),
    ])) as Hash;
    // anvil can answer the hash before its automined block is in; under load the head was read a block early.
    await until(() => rpc("eth_getTransactionReceipt", [replacing]), 30_000, "the transfer to be mined");
    const head = Number(await rpc("eth_blockNumber"));
    expect(head).toBe(before - 2);

    const eventsFrom = pipeline.events.length;
    const indexed = await pipeline.catchUp();
    expect(indexed).toBe(head);
    expect(pipeline.indexer.status().failure).toBeNull();
    expect(await storedIn(orphaned)).toEqual([]);
    const removed = pipeline.events
      .slice(eventsFrom)
      .flatMap((e) => (e.type === "removed" ? [e.removed.hash] : []));
    expect(removed.sort()).toEqual([...orphaned].sort());
    const problems = await verifyStoreAgainstChain({
      rpcUrl: url,
      db: db.database.db,
      config: chainA.config,
      fromBlock: chainA.config.indexer.startBlock,
      toBlock: indexed,
    });
    expect(problems).toEqual([]);

    // Then far more blocks than the reorg window, so that the other chain is far behind.
    await rpc("anvil_mine", [`0x${(REORG_WINDOW_BLOCKS + 150).toString(16)}`]);
    headA = await pipeline.catchUp();
    expect(headA).toBe(Number(await rpc("eth_blockNumber")));
  });

  test("error: the stored cursor is far beyond the head of the chain", async () => {
    const other = await createTestPipeline({
      config: configOn(chainB, chainB.anvil.url),
      database: db.database,
    });
    cleanups.push(() => other.close());
    const headB = Number(await other.chain.client.getBlockNumber({ cacheTime: 0 }));
    expect(headA - headB).toBeGreaterThan(REORG_WINDOW_BLOCKS);
    const stored = await storedCount(db.database.db);

    const refused = assertStoreOnChain(other.common, { chain: other.chain, db: db.database.db });
    await expect(refused).rejects.toBeInstanceOf(ChainMismatchError);
    await expect(refused).rejects.toThrow(
      `the database does not match the chain: it was indexed up to block ${headA}, but the chain's head is block ${headB}. It was filled from another chain`,
    );

    const cycle = await other.indexer.runCycle();
    expect(cycle).toMatchObject({ ended: "failed", indexedBlock: headA, stored: 0, reorgs: 0 });
    expect(other.indexer.status().failure).toContain(`indexed up to block ${headA}`);
    expect(other.indexer.status().failure).toContain("Start with a fresh DATA_DIR");
    // Nothing was rolled back.
    expect((await getCursor(db.database.db, CURSOR_NAME))?.blockNumber).toBe(headA);
    expect(await storedCount(db.database.db)).toBe(stored);
  });

  test("error: the chain has other blocks at and below the stored cursor", async () => {
    const rpcB = createJsonRpc(chainB.anvil.url);
    const headB = Number(await rpcB("eth_blockNumber"));
    await rpcB("anvil_mine", [`0x${(headA - headB + 20).toString(16)}`]);
    const other = await createTestPipeline({
      config: configOn(chainB, chainB.anvil.url),
      database: db.database,
    });
    cleanups.push(() => other.close());
    const stored = await storedCount(db.database.db);

    await expect(
      assertStoreOnChain(other.common, { chain: other.chain, db: db.database.db }),
    ).rejects.toThrow(
      /^the database does not match the chain: the chain has another block \d+ \(0x[0-9a-f]{64}\) than the stored one \(0x[0-9a-f]{64}\), \d+ blocks below the indexed block \d+: deeper than any reorg \(256 blocks\)\. It was filled from another chain/,
    );
    const cycle = await other.indexer.runCycle();
    expect(cycle.ended).toBe("failed");
    expect((await getCursor(db.database.db, CURSOR_NAME))?.blockNumber).toBe(headA);
    expect(await storedCount(db.database.db)).toBe(stored);

    // The right chain still indexes on from the same database.
    expect((await pipeline.indexer.runCycle()).ended).toBe("caught-up");
  });

  test("behavior: /readyz reports an indexer that stopped for good, and `failed` resolves", async () => {
    const rpc = await startSwitchableRpc(chainA.anvil.url);
    cleanups.push(() => rpc.close());
    const store = testDatabaseUrl() === undefined ? null : await createTestDatabase({ migrate: false });
    if (store) cleanups.push(() => store.cleanup());
    const protoscan = await startProtoscan({
      config: configOn(chainA, rpc.url, { pollIntervalSeconds: 1 }),
      role: "all",
      host: "127.0.0.1",
      port: 0,
      databaseUrl: store?.url,
      dataDir: "memory://",
      logLevel: "silent",
      logger: createSilentLogger(),
    });
    cleanups.push(() => protoscan.stop());
    const readyz = async () => {
      const response = await fetch(`${protoscan.url}/readyz`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    await until(
      async () => ((protoscan.indexer?.status().indexedBlock ?? 0) >= headA ? true : null),
      60_000,
      "the indexer to catch up with chain A",
    );
    expect((await readyz()).status).toBe(200);

    rpc.switchTo(chainB.anvil.url);
    const error = await Promise.race([protoscan.failed, sleep(30_000).then(() => null)]);
    expect(error).toBeInstanceOf(ChainMismatchError);
    const { status, body } = await readyz();
    expect(status).toBe(503);
    expect(body).toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      detail: "not ready: indexer failing",
      checks: {
        database: { ok: true },
        rpc: { ok: true },
        indexer: { ok: false, detail: expect.stringContaining("the database does not match the chain") },
      },
    });
  }, 120_000);

  test("error: `protoscan start` refuses to start on another chain, and exits 1 when the chain changes", async () => {
    const tmp = await mkdtemp(path.join(tmpdir(), "protoscan-mismatch-"));
    cleanups.push(() => rm(tmp, { recursive: true, force: true }));
    const rpc = await startSwitchableRpc(chainA.anvil.url);
    cleanups.push(() => rpc.close());
    let storeEnv: Record<string, string> = { DATA_DIR: path.join(tmp, "data") };
    if (testDatabaseUrl() !== undefined) {
      const store = await createTestDatabase({ migrate: false });
      cleanups.push(() => store.cleanup());
      storeEnv = { DATABASE_URL: store.url! };
    }
    const configPath = path.join(tmp, "protoscan.yaml");
    await writeDemoConfig(configPath, {
      ...chainA.configFile,
      rpc: { ...chainA.configFile.rpc, urls: [rpc.url] },
      indexer: { ...chainA.configFile.indexer, pollIntervalSeconds: 1 },
    });
    const start = (): CliProcess => {
      const child = spawnProtoscan(["start"], {
        PROTOSCAN_CONFIG: configPath,
        PORT: "0",
        LOG_LEVEL: "info",
        ...storeEnv,
      });
      cleanups.push(() => child.stop());
      return child;
    };

    const first = start();
    await first.listening(STARTUP_MS);
    await first.waitForLine(
      (l) => l.msg === "indexer cycle done" && typeof l.indexedBlock === "number" && l.indexedBlock >= headA,
      STARTUP_MS,
    );
    // The RPC now serves another chain under the running process: its next cycle stops it.
    rpc.switchTo(chainB.anvil.url);
    const stopped = await first.waitForExit(30_000);
    expect(stopped.code).toBe(1);
    expect(first.output()).toMatch(
      /protoscan: the database does not match the chain: .* Start with a fresh DATA_DIR/,
    );

    // Started again on the other chain: refused at once, with the same reason.
    const second = start();
    const refused = await second.waitForExit(STARTUP_MS);
    expect(refused.code).toBe(1);
    expect(second.output()).toContain(
      "protoscan: the database does not match the chain: the chain has another block",
    );
    expect(second.lines.some((l) => l.msg === "protoscan is listening")).toBe(false);
  }, 300_000);

  async function storedIn(hashes: readonly Hash[]): Promise<string[]> {
    const rows = await db.database.db
      .select({ hash: transactions.hash })
      .from(transactions)
      .where(inArray(transactions.hash, [...hashes]));
    return rows.map((r) => r.hash);
  }
});

function toRequest(tx: { from: string; to?: string; data?: string; gas?: bigint }) {
  return {
    from: tx.from,
    ...(tx.to ? { to: tx.to } : {}),
    ...(tx.data ? { data: tx.data } : {}),
    ...(tx.gas ? { gas: `0x${tx.gas.toString(16)}` } : {}),
  };
}
