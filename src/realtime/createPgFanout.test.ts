import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { apiTransactionJson } from "../../test/helpers/apiSerializer.ts";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../../test/helpers/db.ts";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import type { Config, TokenConfig } from "../config/schema.ts";
import { DEMO, USDC } from "../decode/_test/testRegistry.ts";
import type { IndexedTransaction } from "../decode/decodeTransaction.ts";
import type { Common } from "../internal/common.ts";
import { commitBatch } from "../store/commitBatch.ts";
import type { PostgresDatabase } from "../store/createDatabase.ts";
import { writeOutbox } from "../store/outbox.ts";
import { removeBlocks } from "../store/removeBlocks.ts";
import { swapTransaction } from "./_test/fixtures.ts";
import type { HubEvent } from "./createHub.ts";
import { createPgFanout, type PgFanout } from "./createPgFanout.ts";
import { eventTopics } from "./eventTopics.ts";
import { serializeEventData } from "./serverMessages.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const token = (address: `0x${string}`, symbol: string, decimals: number, protocol: string): TokenConfig => ({
  address,
  symbol,
  name: symbol,
  decimals,
  protocol,
  color: "#000000",
  logo: "",
  official: true,
  exclusive: true,
});
const tokens = [token(DEMO, "DEMO", 18, "demoswap"), token(USDC, "USDC", 6, "demovault")];
const config: Config = { ...testConfig({ urls: ["http://127.0.0.1:1"] }), tokens };
const transactionJson = apiTransactionJson(config);

const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as `0x${string}`;
const blockHash = (n: number) => `0x${(1000 + n).toString(16).padStart(64, "0")}` as `0x${string}`;
const tx = (n: number, block: number, index = 0) =>
  swapTransaction({
    hash: hash(n),
    blockNumber: block,
    blockHash: blockHash(block),
    transactionIndex: index,
  });
const header = (block: number) => ({
  number: block,
  hash: blockHash(block),
  parentHash: blockHash(block - 1),
  timestamp: new Date("2026-11-21T08:00:00.000Z"),
});

type Received = { type: string; topics: string[]; data: Record<string, unknown> };

/** What the hub would send for a transaction of this process (the in-process path), to compare with. */
function local(t: IndexedTransaction): Received {
  const event = { type: "transaction" as const, transaction: t, source: "poll" as const };
  return {
    type: "transaction",
    topics: [...eventTopics(event)].sort(),
    data: JSON.parse(serializeEventData(event, transactionJson)) as Record<string, unknown>,
  };
}

describe.skipIf(testDatabaseUrl() === undefined)("createPgFanout (PostgreSQL)", () => {
  let testDb: TestDatabase;
  let database: PostgresDatabase;
  const fanouts: PgFanout[] = [];

  beforeAll(async () => {
    testDb = await createTestDatabase();
    if (testDb.database.kind !== "postgres") throw new Error("expected PostgreSQL");
    database = testDb.database;
  });

  afterAll(async () => {
    for (const fanout of fanouts) await fanout.stop();
    await testDb?.cleanup();
  });

  async function listen(common: Common = testCommon(config)) {
    const fanout = createPgFanout(common, {
      database,
      transactionJson,
      options: { pollIntervalMs: 200, reconnectDelayMs: 100, batchSize: 3 },
    });
    fanouts.push(fanout);
    const received: Received[] = [];
    fanout.subscribe((event: HubEvent) => {
      if (!("prepared" in event)) throw new Error("the fan-out emits prepared events only");
      received.push({
        type: event.type,
        topics: [...event.topics].sort(),
        data: JSON.parse(event.data) as Record<string, unknown>,
      });
    });
    await fanout.start();
    return { fanout, received, common };
  }

  const commit = (transactions: IndexedTransaction[], blocks: number[]) =>
    commitBatch(database.db, {
      source: "poll",
      transactions,
      blocks: blocks.map(header),
      deltaTokens: new Set(),
      outbox: true,
    });

  async function until(check: () => boolean, timeoutMs: number, what: string) {
    const started = Date.now();
    while (!check()) {
      if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await sleep(20);
    }
  }

  test("default: every listener receives every stored transaction once, in commit order, as the hub would send it", async () => {
    const a = await listen();
    const b = await listen();
    const first = [tx(1, 10), tx(2, 10, 1)];
    const second = [tx(3, 11), tx(4, 12), tx(5, 12, 1), tx(6, 13)];
    await commit(first, [10]);
    await commit(second, [11, 12, 13]);
    const expected = [...first, ...second].map(local);
    await until(() => a.received.length >= 6 && b.received.length >= 6, 5_000, "delivery");
    await sleep(300); // nothing more arrives
    expect(a.received).toEqual(expected);
    expect(b.received).toEqual(expected);
    expect(a.fanout.status()).toMatchObject({ listening: true });
    expect(await a.common.metrics.registry.getSingleMetricAsString("protoscan_fanout_events_total")).toMatch(
      /type="transaction"} 6/,
    );
  });

  test("behavior: a listener started later does not replay history", async () => {
    const late = await listen();
    await commit([tx(7, 20)], [20]);
    await until(() => late.received.length >= 1, 5_000, "delivery");
    await sleep(300);
    expect(late.received.map((r) => r.data.txHash)).toEqual([hash(7)]);
  });

  test("behavior: removals are delivered with the topics the transaction had; a transaction removed before it was read is skipped with its removal", async () => {
    const l = await listen();
    const kept = tx(8, 30);
    await commit([kept], [30]);
    await until(() => l.received.length >= 1, 5_000, "delivery");
    await removeBlocks(database.db, { after: 29 }, new Set(), undefined, { outbox: true });
    await until(() => l.received.length >= 2, 5_000, "removal");
    expect(l.received[0]).toEqual(local(kept));
    const removal = l.received[1]!;
    expect(removal).toEqual({
      type: "removed",
      topics: local(kept).topics,
      data: { txHash: hash(8), blockNumber: 30, blockHash: blockHash(30) },
    });

    // A transaction whose row is gone when the listener reads (removed meanwhile): neither its announcement
    // nor its removal reach clients. Played with outbox rows alone, so the timing cannot vary.
    const gone = { txHash: hash(9), blockNumber: 31, blockHash: blockHash(31) };
    await database.db.transaction((trx) => writeOutbox(trx, [{ kind: "transaction", ...gone }]));
    await database.db.transaction((trx) =>
      writeOutbox(trx, [
        { kind: "removed", ...gone, detail: { protocol: "demoswap", parties: [], tokens: [] } },
      ]),
    );
    await commit([tx(10, 32)], [32]);
    await until(() => l.received.length >= 3, 5_000, "delivery");
    await sleep(300);
    expect(l.received.slice(2).map((r) => `${r.type}:${String(r.data.txHash)}`)).toEqual([
      `transaction:${hash(10)}`,
    ]);
  });

  test("behavior: the LISTEN session is killed; the listener reconnects and catches up, nothing lost or repeated", async () => {
    const l = await listen();
    await commit([tx(11, 40)], [40]);
    await until(() => l.received.length >= 1, 5_000, "delivery");
    const killed = await database.pool.query<{ pid: number }>(
      "select pg_terminate_backend(pid) as ok, pid from pg_stat_activity where application_name = 'protoscan-fanout' and datname = current_database()",
    );
    expect(killed.rows.length).toBeGreaterThan(0);
    // Committed while the listeners are down (every test's listener was killed).
    await commit([tx(12, 41), tx(13, 41, 1), tx(14, 42), tx(15, 43)], [41, 42, 43]);
    await commit([tx(16, 44)], [44]);
    await until(() => l.received.length >= 6, 10_000, "catch-up");
    await sleep(300);
    expect(l.received.map((r) => r.data.txHash)).toEqual([11, 12, 13, 14, 15, 16].map(hash));
    expect(
      await l.common.metrics.registry.getSingleMetricAsString("protoscan_fanout_reconnects_total"),
    ).toMatch(/protoscan_fanout_reconnects_total [1-9]/);
  });
});
