import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { ConfigFile } from "../../src/config/schema.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { writeDemoConfig } from "../../src/demo/demoConfig.ts";
import { createSilentLogger } from "../../src/internal/logger.ts";
import { type PriceServer, startPriceServer } from "../../src/prices/_test/priceServer.ts";
import { createDatabase, type Db } from "../../src/store/createDatabase.ts";
import { createTestDatabase, testDatabaseUrl } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { type CliProcess, spawnProtoscan } from "../helpers/processes.ts";

const HOUR = 3600;
const DAY = 24 * HOUR;
/** tsx compiling the sources on a loaded 2-core machine can take many seconds before protoscan listens. */
const STARTUP_MS = 90_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let chain: DemoChain;
let server: PriceServer;
let tmp: string;
let configPath: string;
let storeEnv: Record<string, string>;
let openStore: () => Promise<{ db: Db; close(): Promise<void> }>;
const children: CliProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
/** the chain starts 20 days ago: three weekly requests per token */
const genesis = Math.floor(Date.now() / 1000 / HOUR) * HOUR - 20 * DAY;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "protoscan-backfill-"));
  chain = await setupDemoChain({ anvil: { extraArgs: ["--timestamp", String(genesis)] } });
  await generateTransactions({
    rpcUrl: chain.anvil.url,
    deployment: chain.deployment,
    count: 5,
    perBlock: 5,
  });
  server = await startPriceServer();
  for (const token of chain.config.tokens) server.history.set(token.address, (t) => 1 + (t / HOUR) * 1e-6);
  server.delayMs = 300;
  const file: ConfigFile = {
    ...chain.configFile,
    indexer: { ...chain.configFile.indexer, pollIntervalSeconds: 1 },
    prices: { cacheSeconds: 300, api: { kind: "defillama", baseUrl: server.url } },
  };
  configPath = path.join(tmp, "protoscan.yaml");
  await writeDemoConfig(configPath, file);
  if (testDatabaseUrl() !== undefined) {
    const test = await createTestDatabase({ migrate: false });
    cleanups.push(() => test.cleanup());
    storeEnv = { DATABASE_URL: test.url! };
    openStore = async () => ({ db: test.database.db, close: async () => undefined });
  } else {
    const dataDir = path.join(tmp, "data");
    storeEnv = { DATA_DIR: dataDir };
    openStore = async () => {
      const database = await createDatabase({ dataDir, logger: createSilentLogger() });
      return { db: database.db, close: () => database.close() };
    };
  }
}, 300_000);

afterAll(async () => {
  for (const child of children) await child.stop();
  for (const cleanup of cleanups.reverse()) await cleanup();
  await server?.close();
  await chain?.anvil.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

function start(): CliProcess {
  const child = spawnProtoscan(["start"], {
    PROTOSCAN_CONFIG: configPath,
    PORT: "0",
    LOG_LEVEL: "info",
    ...storeEnv,
  });
  children.push(child);
  return child;
}

const chartRequests = () =>
  server.requests.filter((r) => r.path.startsWith("/chart/")).map((r) => `${r.tokens[0]} ${r.range!.start}`);

test("behavior: kill -9 during the api backfill, restarted: it resumes and completes every hour once", async () => {
  const first = start();
  await first.waitForLine((l) => l.msg === "protoscan is listening", STARTUP_MS);
  const deadline = Date.now() + 60_000;
  while (chartRequests().length < 4 && Date.now() < deadline) await sleep(20);
  expect(chartRequests().length, first.output()).toBeGreaterThanOrEqual(4);
  first.signal("SIGKILL");
  expect(await first.waitForExit(10_000)).toEqual({ code: null, signal: "SIGKILL" });
  const before = chartRequests();

  const second = start();
  await second.waitForLine((l) => l.msg === "protoscan is listening", STARTUP_MS);
  // 4 tokens x 3 weeks = 12 steps in all, one per second at most: wait until the requests stop.
  let last = chartRequests().length;
  let quietSince = Date.now();
  while (Date.now() - quietSince < 4_000) {
    await sleep(200);
    const now = chartRequests().length;
    if (now !== last) [last, quietSince] = [now, Date.now()];
  }
  second.signal("SIGTERM");
  await second.waitForExit(30_000);

  // Resumed: of what the killed process asked, at most the request in flight is asked again.
  const after = chartRequests().slice(before.length);
  expect(after.filter((r) => before.includes(r)).length).toBeLessThanOrEqual(1);
  expect(new Set(after).size).toBe(after.length);
  // Complete: every token covered from the first indexed hour to the current one, a point for every hour.
  const store = await openStore();
  try {
    const progress = await store.db.execute<{
      token_address: string;
      covered_from: string;
      covered_to: string;
    }>(sql`select token_address, covered_from, covered_to from price_backfill where provider = 'defillama'`);
    expect(progress.rows).toHaveLength(chain.config.tokens.length);
    const firstTx = await store.db.execute<{ t: string }>(
      sql`select min(block_timestamp) as t from transactions`,
    );
    const since = Math.floor(Date.parse(String(firstTx.rows[0]!.t)) / 1000 / HOUR) * HOUR;
    for (const row of progress.rows) {
      const from = Date.parse(String(row.covered_from)) / 1000;
      const to = Date.parse(String(row.covered_to)) / 1000;
      expect(from).toBe(since);
      expect(to).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000 / HOUR) * HOUR - HOUR);
      const points = await store.db.execute<{ n: string; wrong: string }>(sql`
        select count(*) as n,
          count(*) filter (where abs(price_usd - (1 + extract(epoch from time) / 3600 * 1e-6)) > 1e-9) as wrong
        from price_history where token_address = ${row.token_address} and source = 'api' and origin = 'backfill'`);
      expect(Number(points.rows[0]!.n), row.token_address).toBe((to - from) / HOUR + 1);
      expect(Number(points.rows[0]!.wrong)).toBe(0);
    }
  } finally {
    await store.close();
  }
}, 300_000);
