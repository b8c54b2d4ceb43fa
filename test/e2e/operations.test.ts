import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveConfig } from "../../src/config/resolveConfig.ts";
import type { Config, ConfigFile } from "../../src/config/schema.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { writeDemoConfig } from "../../src/demo/demoConfig.ts";
import { createSilentLogger } from "../../src/internal/logger.ts";
import { createDatabase, type Database } from "../../src/store/createDatabase.ts";
import { testDatabaseUrl } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { type CliProcess, spawnProtoscan } from "../helpers/processes.ts";
import {
  collectTransactions,
  createServerDatabase,
  getJson,
  type ServerDatabase,
  until,
  viaPort,
  type WsCollector,
  withOutputs,
} from "../helpers/scaleout.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcpProxy.ts";
import { verifyStoreAgainstChain } from "../helpers/verifyStore.ts";

const TRANSACTIONS = 2000;
const PER_BLOCK = 20;
const CHUNK_BLOCKS = 2;
const STARTUP_MS = 60_000;
const ACQUIRED = "writer lock acquired: this process is the active writer";

/**
 * The database goes away and comes back (a TCP proxy in front of the shared PostgreSQL, cut and restored:
 * the server itself keeps running for other tests), and an indexer is stopped with SIGTERM mid-backfill.
 */
describe.skipIf(testDatabaseUrl() === undefined)(
  "operations on PostgreSQL: outage, readiness, SIGTERM",
  () => {
    let chain: DemoChain;
    let config: Config;
    let configPath: string;
    let tmp: string;
    let head: number;
    let db: ServerDatabase;
    let store: Database;
    let proxy: TcpProxy;
    const children: CliProcess[] = [];
    let client: WsCollector | undefined;

    beforeAll(async () => {
      tmp = await mkdtemp(path.join(tmpdir(), "protoscan-ops-"));
      chain = await setupDemoChain({ pollIntervalSeconds: 1 });
      const generated = await generateTransactions({
        rpcUrl: chain.anvil.url,
        deployment: chain.deployment,
        count: TRANSACTIONS,
        perBlock: PER_BLOCK,
      });
      head = generated.toBlock;
      const file: ConfigFile = {
        ...chain.configFile,
        indexer: { ...chain.configFile.indexer, logChunkBlocks: CHUNK_BLOCKS, pollIntervalSeconds: 1 },
        api: { ...chain.configFile.api, rateLimitPerMinute: 100_000 },
      };
      config = resolveConfig(file, null);
      configPath = path.join(tmp, "protoscan.yaml");
      await writeDemoConfig(configPath, file);
      db = await createServerDatabase(testDatabaseUrl()!);
      store = await createDatabase({ databaseUrl: db.url, logger: createSilentLogger(), poolSize: 2 });
      proxy = await startTcpProxy(Number(new URL(db.url).port || 5432), new URL(db.url).hostname);
    }, 120_000);

    afterAll(async () => {
      client?.close();
      for (const child of children) await child.stop();
      await proxy?.close();
      await store?.close();
      await db?.drop();
      await chain?.anvil.stop();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    });

    function start(role: "api" | "indexer"): CliProcess {
      const child = spawnProtoscan(["start", "--role", role], {
        PROTOSCAN_CONFIG: configPath,
        DATABASE_URL: viaPort(db.url, proxy.port),
        PORT: "0",
        LOG_LEVEL: "info",
      });
      children.push(child);
      return child;
    }
    const startedUrl = async (child: CliProcess) =>
      String(
        (
          await child.waitForLine(
            (l) => l.msg === "protoscan indexer started" || l.msg === "protoscan is listening",
            STARTUP_MS,
          )
        ).url,
      );
    const cursor = async () =>
      Number(
        (await db.query<{ block: string }>("select block_number as block from indexer_cursor"))[0]?.block ??
          -1,
      );
    const readyStatus = async (url: string) => (await getJson(`${url}/readyz`))?.status;

    test("behavior: SIGTERM mid-backfill exits 0 in 10 s; a database outage turns /readyz 503 and back; nothing lost or repeated", async () => {
      await withOutputs(children, async () => {
        const api = start("api");
        const apiUrl = await api.listening(STARTUP_MS);
        client = await collectTransactions(apiUrl);

        // 1. SIGTERM an indexer in the middle of the backfill.
        const first = start("indexer");
        await startedUrl(first);
        await first.waitForLine((l) => l.msg === ACQUIRED, STARTUP_MS);
        const from = config.indexer.startBlock;
        await until(async () => (await cursor()) >= from + (head - from) / 5, 60_000, "some commits");
        const sentAt = Date.now();
        first.signal("SIGTERM");
        expect(await first.waitForExit(10_000)).toEqual({ code: 0, signal: null });
        expect(Date.now() - sentAt).toBeLessThan(10_000);
        expect(first.lines.filter((l) => (l.level ?? 0) >= 50)).toEqual([]);
        const stoppedAt = await cursor();
        expect(stoppedAt).toBeLessThan(head);
        expect(await verify(stoppedAt)).toEqual([]);

        // 2. A new indexer resumes from the cursor; the database goes away in the middle.
        const second = start("indexer");
        const opsUrl = await startedUrl(second);
        await second.waitForLine((l) => l.msg === ACQUIRED, STARTUP_MS);
        await until(async () => (await cursor()) > stoppedAt + 4, 60_000, "the second indexer commits");
        expect(await readyStatus(apiUrl)).toBe(200);
        expect(await readyStatus(opsUrl)).toBe(200);

        proxy.cut();
        await until(async () => (await readyStatus(apiUrl)) === 503, 15_000, "api /readyz 503");
        await until(async () => (await readyStatus(opsUrl)) === 503, 15_000, "indexer /readyz 503");
        const notReady = await getJson(`${opsUrl}/readyz`);
        expect(notReady?.body).toMatchObject({
          code: "UPSTREAM_UNAVAILABLE",
          checks: { database: { ok: false }, rpc: { ok: true } },
          writer: { held: false },
        });
        // The writer lost its lock session with the database: it stopped writing.
        await second.waitForLine(
          (l) => l.msg === "writer lock lost: stopping the writers, then campaigning again",
          15_000,
        );
        const duringOutage = await cursor(); // read directly, not through the proxy
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(await cursor()).toBe(duringOutage);

        proxy.restore();
        await until(async () => (await readyStatus(apiUrl)) === 200, 20_000, "api /readyz 200 again");
        await until(async () => (await readyStatus(opsUrl)) === 200, 20_000, "indexer /readyz 200 again");
        // It takes the lock again (nobody else wants it) and resumes from the cursor.
        await until(() => second.lines.filter((l) => l.msg === ACQUIRED).length >= 2, 15_000, "lock again");

        await until(async () => (await cursor()) >= head, 90_000, "the indexer finishes after the outage");
        expect(await verify(head)).toEqual([]);

        // The API replica's client got every stored transaction once, in block order, across both disruptions
        // (its LISTEN session was cut too and caught up from the outbox).
        const stored = await db.query<{ hash: string }>(
          "select hash from transactions order by block_number, transaction_index",
        );
        await until(() => client!.events.length >= stored.length, 30_000, "the client receives everything");
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(client.events.map((e) => e.txHash)).toEqual(stored.map((r) => r.hash));

        for (const child of [api, second]) child.signal("SIGTERM");
        expect(await api.waitForExit(10_000)).toEqual({ code: 0, signal: null });
        expect(await second.waitForExit(10_000)).toEqual({ code: 0, signal: null });
        expect(await client.closed).toBe(1001);
      });
    }, 240_000);

    async function verify(toBlock: number): Promise<string[]> {
      const problems = await verifyStoreAgainstChain({
        rpcUrl: chain.anvil.url,
        db: store.db,
        config,
        fromBlock: config.indexer.startBlock,
        toBlock,
      });
      if (toBlock >= head) return problems.slice(0, 10);
      // Balances of tokens not scanned in full are read again only once a cycle catches up.
      const lagging = config.tokens.filter((t) => !t.exclusive).map((t) => `balance ${t.address}:`);
      return problems.filter((p) => !lagging.some((prefix) => p.startsWith(prefix))).slice(0, 10);
    }
  },
);
