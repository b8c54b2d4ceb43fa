import type { FastifyInstance } from "fastify";
import { createTestDatabase, type TestDatabase } from "../../../../test/helpers/db.ts";
import { testCommon, testConfig } from "../../../chain/_test/testCommon.ts";
import { createChainClient } from "../../../chain/createChainClient.ts";
import type { Config, TokenConfig } from "../../../config/schema.ts";
import { DEMO } from "../../../decode/_test/testRegistry.ts";
import { type Broadcaster, createLocalBroadcaster } from "../../../ingest/broadcaster.ts";
import { swapTransaction } from "../../../realtime/_test/fixtures.ts";
import { commitBatch } from "../../../store/commitBatch.ts";
import { buildApp } from "../../buildApp.ts";

/** The time of every block the route tests commit. */
export const BLOCK_TIME = new Date("2026-11-21T08:00:00.000Z");
export const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as const;
export const blockHash = (n: number) => `0x${(1000 + n).toString(16).padStart(64, "0")}` as const;
/** A DemoSwap swap in block `n` with hash `hash(n)`. */
export const tx = (n: number) => swapTransaction({ hash: hash(n), blockNumber: n, blockHash: blockHash(n) });
export const header = (n: number) => ({
  number: n,
  hash: blockHash(n),
  parentHash: blockHash(n - 1),
  timestamp: BLOCK_TIME,
});

/** The DEMO token of the route tests, DemoSwap's; `overrides` for what a test needs otherwise (a price). */
export function demoToken(overrides: Partial<TokenConfig> = {}): TokenConfig {
  return {
    address: DEMO,
    symbol: "DEMO",
    name: "Demo",
    decimals: 18,
    protocol: "demoswap",
    color: "#888888",
    logo: "",
    official: true,
    exclusive: true,
    ...overrides,
  };
}

/** A config with the DemoSwap protocol (no contracts) and its DEMO token, against `urls`. */
export function demoswapConfig(urls: string[], token: Partial<TokenConfig> = {}): Config {
  const config = testConfig({ urls });
  config.protocols = [{ id: "demoswap", name: "DemoSwap", contracts: [], tvlAddresses: [], actions: {} }];
  config.tokens = [demoToken(token)];
  return config;
}

export type RouteApps = {
  tdb: TestDatabase;
  config: Config;
  /** the app with its response caches (it hears `events`) */
  cached: FastifyInstance;
  /** the same app without caches: what a cached body must equal */
  uncached: FastifyInstance;
  events: Broadcaster;
  close(): Promise<void>;
};

/**
 * A test database with the swaps of blocks 1 and 2 committed, and two apps over it, one with caches and one
 * without, against a node that does not answer (port 9): the route tests read the store only.
 */
export async function openRouteApps(): Promise<RouteApps> {
  const tdb = await createTestDatabase();
  const config = demoswapConfig(["http://127.0.0.1:9"]);
  const common = testCommon(config);
  const chain = createChainClient(common);
  const events = createLocalBroadcaster();
  const cached = await buildApp(common, { database: tdb.database, chain, events });
  const uncached = await buildApp(common, { database: tdb.database, chain });
  await commitBatch(tdb.database.db, {
    source: "poll",
    transactions: [tx(1), tx(2)],
    blocks: [header(1), header(2)],
    deltaTokens: new Set(),
  });
  return {
    tdb,
    config,
    cached,
    uncached,
    events,
    async close() {
      await cached.close();
      await uncached.close();
      await tdb.cleanup();
    },
  };
}
