import { createHmac } from "node:crypto";
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
  metricValue,
  type ServerDatabase,
  scrape,
  until,
  type WsCollector,
  withOutputs,
} from "../helpers/scaleout.ts";
import { verifyStoreAgainstChain } from "../helpers/verifyStore.ts";

// ~150 blocks of 20 protocol transactions, scanned 3 blocks per eth_getLogs: ~50 commits, long enough to
// kill the writer in the middle.
const TRANSACTIONS = 3000;
const PER_BLOCK = 20;
const CHUNK_BLOCKS = 3;
/** tsx compiling the sources on a loaded 2-core machine can take many seconds before protoscan listens. */
const STARTUP_MS = 60_000;
const SIGNING_KEY = "whsec_scaleout_test_key";
const ACQUIRED = "writer lock acquired: this process is the active writer";
const STANDING_BY = "writer lock held by another process: standing by";

describe.skipIf(testDatabaseUrl() === undefined)(
  "scale-out on PostgreSQL: two indexers, two API replicas",
  () => {
    let chain: DemoChain;
    let config: Config;
    let configPath: string;
    let tmp: string;
    let head: number;
    let db: ServerDatabase;
    let store: Database;
    const children: CliProcess[] = [];
    const clients: WsCollector[] = [];

    beforeAll(async () => {
      tmp = await mkdtemp(path.join(tmpdir(), "protoscan-scaleout-"));
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
        webhooks: { alchemy: { signingKeys: [SIGNING_KEY] } },
      };
      config = resolveConfig(file, null);
      configPath = path.join(tmp, "protoscan.yaml");
      await writeDemoConfig(configPath, file);
      db = await createServerDatabase(testDatabaseUrl()!);
      store = await createDatabase({ databaseUrl: db.url, logger: createSilentLogger(), poolSize: 2 });
    }, 120_000);

    afterAll(async () => {
      for (const client of clients) client.close();
      for (const child of children) await child.stop();
      await store?.close();
      await db?.drop();
      await chain?.anvil.stop();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    });

    function start(role: "api" | "indexer"): CliProcess {
      const child = spawnProtoscan(["start", "--role", role], {
        PROTOSCAN_CONFIG: configPath,
        DATABASE_URL: db.url,
        PORT: "0",
        LOG_LEVEL: "info",
      });
      children.push(child);
      return child;
    }

    const startedUrl = async (child: CliProcess) => {
      const line = await child.waitForLine(
        (l) => l.msg === "protoscan indexer started" || l.msg === "protoscan is listening",
        STARTUP_MS,
      );
      return String(line.url);
    };
    const cursor = async () =>
      (await db.query<{ block: string }>("select block_number as block from indexer_cursor"))[0]?.block;
    const has = (child: CliProcess, msg: string) => child.lines.some((l) => l.msg === msg);

    test("behavior: one writer at a time, SIGKILL mid-backfill, the standby finishes exactly; every replica's clients get every transaction once", async () => {
      await withOutputs(children, async () => {
        // The API replicas first, with clients subscribed before anything is stored.
        const apis = [start("api"), start("api")];
        const apiUrls = await Promise.all(apis.map((api) => api.listening(STARTUP_MS)));
        clients.push(
          await collectTransactions(apiUrls[0]!),
          await collectTransactions(apiUrls[0]!),
          await collectTransactions(apiUrls[1]!),
        );

        const indexers = [start("indexer"), start("indexer")];
        const opsUrls = await Promise.all(indexers.map(startedUrl));
        // Exactly one of them takes the lock; the other stands by.
        const holderIndex = await until(
          () => {
            const i = indexers.findIndex((x) => has(x, ACQUIRED));
            return i >= 0 && indexers.every((x, j) => j === i || has(x, STANDING_BY)) ? i : undefined;
          },
          STARTUP_MS,
          "one writer elected",
        );
        const holder = indexers[holderIndex]!;
        const standby = indexers[1 - holderIndex]!;
        const standbyUrl = opsUrls[1 - holderIndex]!;
        const holderUrl = opsUrls[holderIndex]!;
        expect(has(standby, ACQUIRED)).toBe(false);

        // Let it write part of the backfill, then check who says what.
        const start0 = config.indexer.startBlock;
        await until(
          async () => Number((await cursor()) ?? -1) >= start0 + (head - start0) / 4,
          60_000,
          "some commits",
        );
        const [holderReady, standbyReady] = await Promise.all([
          getJson(`${holderUrl}/readyz`),
          getJson(`${standbyUrl}/readyz`),
        ]);
        expect(holderReady).toMatchObject({ status: 200, body: { writer: { held: true } } });
        expect(standbyReady).toMatchObject({
          status: 200,
          body: {
            writer: { held: false, since: null },
            checks: { writerLock: { ok: true, detail: "standby" } },
          },
        });
        const standbyBefore = await scrape(standbyUrl);
        expect(metricValue(standbyBefore, "protoscan_writer_lock_held")).toBe(0);
        expect(
          metricValue(standbyBefore, "protoscan_ingest_transactions_total", { source: "poll" }),
        ).toBeUndefined();
        expect(metricValue(await scrape(holderUrl), "protoscan_writer_lock_held")).toBe(1);

        const killedAt = Number((await cursor()) ?? -1);
        expect(killedAt).toBeLessThan(head);
        holder.signal("SIGKILL");
        const sentAt = Date.now();
        expect(await holder.waitForExit(10_000)).toEqual({ code: null, signal: "SIGKILL" });
        await standby.waitForLine((l) => l.msg === ACQUIRED, 10_000);
        // The dead writer's session ended with it: the standby, asking every second, took over at once.
        expect(Date.now() - sentAt).toBeLessThan(5_000);

        await until(
          async () => Number((await cursor()) ?? -1) >= head,
          90_000,
          "the standby finishes the backfill",
        );
        const problems = await verifyStoreAgainstChain({
          rpcUrl: chain.anvil.url,
          db: store.db,
          config,
          fromBlock: start0,
          toBlock: head,
        });
        expect(problems.slice(0, 10)).toEqual([]);
        const stored = await db.query<{ hash: string; block: string; idx: number }>(
          "select hash, block_number as block, transaction_index as idx from transactions order by block_number, transaction_index",
        );
        expect(stored.length).toBeGreaterThanOrEqual(TRANSACTIONS);

        // Every client of both replicas: every stored transaction exactly once, in block order.
        for (const [i, client] of clients.entries()) {
          await until(() => client.events.length >= stored.length, 30_000, `client ${i} receives everything`);
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
        for (const client of clients) {
          expect(client.events.every((e) => e.type === "transaction")).toBe(true);
          expect(client.events.map((e) => e.txHash)).toEqual(stored.map((r) => r.hash));
        }

        // The new writer's metrics.
        const writer = await scrape(standbyUrl);
        expect(metricValue(writer, "protoscan_writer_lock_held")).toBe(1);
        expect(metricValue(writer, "protoscan_writer_lock_transitions_total", { event: "acquired" })).toBe(1);
        // It stored only what the dead writer had not committed: blocks above a cursor at least `killedAt`.
        const written = metricValue(writer, "protoscan_ingest_transactions_total", { source: "poll" }) ?? 0;
        expect(written).toBeGreaterThan(0);
        expect(written).toBeLessThanOrEqual(stored.filter((r) => Number(r.block) > killedAt).length);
        expect(metricValue(writer, "protoscan_indexer_indexed_block")).toBe(head);
        expect(metricValue(writer, "protoscan_indexer_chain_head_block")).toBe(head);
        expect(metricValue(writer, "protoscan_indexer_lag_blocks")).toBe(0);
        expect(
          metricValue(writer, "protoscan_rpc_requests_total", { method: "eth_getLogs", outcome: "ok" }),
        ).toBeGreaterThan(0);
        expect(metricValue(writer, "protoscan_rpc_compute_units_total")).toBeGreaterThan(0);

        // API metrics move with traffic: HTTP by route pattern, WebSocket, price lookups, webhook deliveries.
        const api = apiUrls[0]!;
        const before = await scrape(api);
        const token = config.tokens[0]!.address;
        for (let i = 0; i < 3; i++) expect((await fetch(`${api}/api/tokens/${token}`)).status).toBe(200);
        expect((await fetch(`${api}/api/tx/0x${"00".repeat(32)}`)).status).toBe(404);
        const body = JSON.stringify({
          webhookId: "wh_scaleout",
          id: "whevt_scaleout_1",
          createdAt: new Date().toISOString(),
          type: "ADDRESS_ACTIVITY",
          event: { network: "ETH_MAINNET", activity: [{ hash: stored[0]!.hash }] },
        });
        const signature = createHmac("sha256", SIGNING_KEY).update(body).digest("hex");
        const post = (sig: string) =>
          fetch(`${api}/api/webhooks/alchemy`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-alchemy-signature": sig },
            body,
          });
        expect((await post(signature)).status).toBe(200);
        expect((await post("00".repeat(32))).status).toBe(401);
        const after = await scrape(api);
        const route = { method: "GET", route: "/api/tokens/:address", status: "200" };
        expect(
          (metricValue(after, "protoscan_http_requests_total", route) ?? 0) -
            (metricValue(before, "protoscan_http_requests_total", route) ?? 0),
        ).toBe(3);
        expect(
          metricValue(after, "protoscan_http_requests_total", {
            method: "GET",
            route: "/api/tx/:hash",
            status: "404",
          }),
        ).toBe(1);
        expect(after).not.toContain(`0x${"00".repeat(32)}`);
        expect(metricValue(after, "protoscan_ws_connections")).toBe(2);
        expect(metricValue(after, "protoscan_ws_messages_sent_total", { type: "transaction" })).toBe(
          2 * stored.length,
        );
        const lookups = ["memory", "stored", "api", "dex", "static", "none"].reduce(
          (sum, tier) => sum + (metricValue(after, "protoscan_price_lookups_total", { tier }) ?? 0),
          0,
        );
        expect(lookups).toBeGreaterThan(0);
        expect(
          metricValue(after, "protoscan_webhook_deliveries_total", {
            provider: "alchemy",
            outcome: "accepted",
          }),
        ).toBe(1);
        expect(
          metricValue(after, "protoscan_webhook_deliveries_total", {
            provider: "alchemy",
            outcome: "invalid_signature",
          }),
        ).toBe(1);
        expect(metricValue(after, "protoscan_fanout_events_total", { type: "transaction" })).toBe(
          stored.length,
        );
        // The delivery is processed by the active writer's inbox worker (the API replica only stored it).
        await until(
          async () =>
            metricValue(await scrape(standbyUrl), "protoscan_webhook_processing_total", {
              outcome: "done",
            }) === 1,
          15_000,
          "the writer processes the webhook delivery",
        );

        // SIGTERM everyone: each exits 0 within 10 s, WebSocket clients are closed with 1001.
        const running = [...apis, standby];
        const sent = Date.now();
        for (const child of running) child.signal("SIGTERM");
        const exits = await Promise.all(running.map((child) => child.waitForExit(10_000)));
        expect(exits).toEqual(running.map(() => ({ code: 0, signal: null })));
        expect(Date.now() - sent).toBeLessThan(10_000);
        expect(await Promise.all(clients.map((c) => c.closed))).toEqual(clients.map(() => 1001));
        for (const child of running) expect(child.lines.filter((l) => (l.level ?? 0) >= 50)).toEqual([]);
      });
    }, 240_000);
  },
);
