import { sql } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { type Anvil, startTestAnvil } from "../../../test/helpers/anvil.ts";
import { createTestDatabase, type TestDatabase } from "../../../test/helpers/db.ts";
import { testCommon, testConfig } from "../../chain/_test/testCommon.ts";
import { createChainClient } from "../../chain/createChainClient.ts";
import { DEMO } from "../../decode/_test/testRegistry.ts";
import { createLocalBroadcaster } from "../../ingest/broadcaster.ts";
import { upsertReadings } from "../../store/balanceWrites.ts";
import { type ChangeNotice, type ChangeNotices, listenForChanges } from "../../store/changeNotices.ts";
import { buildApp } from "../buildApp.ts";
import { demoToken } from "./_test/routeApps.ts";

const SUPPLY = 1000n * 10n ** 18n;
/** Runtime code returning SUPPLY for any call: enough of a token for `totalSupply()`. */
const CONSTANT_CODE = `0x7f${SUPPLY.toString(16).padStart(64, "0")}60005260206000f3` as const;
const holder = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as const;

/**
 * The caches built from token balances and the cursor (holders pages, the address view's stored part, the
 * indexer section on a replica): the rows change without an ingest event (call-mode balance refreshes, the
 * cursor over empty blocks), so the change notices of migration 0009 empty them. Writes with the notice
 * trigger disabled show what is cached; with it, that they are dropped.
 */
describe("caches emptied by change notices (balances, cursor)", () => {
  let anvil: Anvil;
  let tdb: TestDatabase;
  let cached: FastifyInstance;
  let uncached: FastifyInstance;
  let changes: ChangeNotices;
  const heardNotices: ChangeNotice[] = [];

  beforeAll(async () => {
    anvil = await startTestAnvil();
    await fetch(anvil.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setCode", params: [DEMO, CONSTANT_CODE] }),
    });
    tdb = await createTestDatabase();
    const config = testConfig({ urls: [anvil.url] });
    config.tokens = [demoToken({ exclusive: false })];
    const common = testCommon(config);
    const chain = createChainClient(common);
    // The app's own notices, so that the test knows when one reached its caches (same listeners, same call).
    changes = await listenForChanges(tdb.database, { logger: common.logger });
    changes.subscribe((notice) => heardNotices.push(notice));
    const events = createLocalBroadcaster();
    cached = await buildApp(common, { database: tdb.database, chain, events, changes });
    uncached = await buildApp(common, { database: tdb.database, chain });
    await heard("token_balances", () =>
      upsertReadings(tdb.database.db, [
        { token: DEMO, holder: holder(1), balance: 10n ** 18n, blockNumber: 1 },
        { token: DEMO, holder: holder(2), balance: 2n * 10n ** 18n, blockNumber: 1 },
      ]),
    );
  });
  afterAll(async () => {
    await cached?.close();
    await uncached?.close();
    await changes?.close();
    await tdb?.cleanup();
    await anvil?.stop();
  });

  /** Write with the change-notice trigger of `table` off: nobody hears of it. */
  const unheard = async (table: "token_balances" | "indexer_cursor", write: () => Promise<unknown>) => {
    const trigger = sql.identifier(`${table}_notify_change`);
    await tdb.database.db.execute(sql`alter table ${sql.identifier(table)} disable trigger ${trigger}`);
    try {
      await write();
    } finally {
      await tdb.database.db.execute(sql`alter table ${sql.identifier(table)} enable trigger ${trigger}`);
    }
  };
  /** Write and wait until its notice reached the cached app (notices arrive asynchronously on PostgreSQL). */
  const heard = async (table: ChangeNotice, write: () => Promise<unknown>) => {
    const from = heardNotices.length;
    await write();
    await vi.waitFor(() => expect(heardNotices.slice(from)).toContain(table), { timeout: 10_000 });
  };
  const bodies = async (url: string) => {
    const [a, b] = [await cached.inject({ url }), await uncached.inject({ url })];
    expect(a.statusCode, url).toBe(200);
    expect(b.statusCode, url).toBe(200);
    return { cached: a.body, uncached: b.body };
  };

  test("default: cached holders pages and address views are the uncached bodies, byte for byte", async () => {
    for (const url of [
      `/api/tokens/${DEMO}/holders`,
      `/api/tokens/${DEMO}/holders?limit=1&offset=1`,
      `/api/address/${holder(2)}`,
      `/api/tokens/${DEMO}/holders`,
      `/api/address/${holder(2)}`,
    ]) {
      const got = await bodies(url);
      expect(got.cached, url).toBe(got.uncached);
    }
  });

  test("behavior: a holders page is kept until a balance change is committed", async () => {
    const url = `/api/tokens/${DEMO}/holders`;
    const before = (await bodies(url)).cached;
    expect(JSON.parse(before)).toMatchObject({ total: 2, holders: [{ balance: "2000000000000000000" }, {}] });
    await unheard("token_balances", () =>
      upsertReadings(tdb.database.db, [
        { token: DEMO, holder: holder(3), balance: 5n * 10n ** 18n, blockNumber: 2 },
      ]),
    );
    const unnoticed = await bodies(url);
    expect(unnoticed.cached).toBe(before);
    expect(JSON.parse(unnoticed.uncached)).toMatchObject({ total: 3 });
    // A call-mode refresh: balances only, no transaction, no ingest event; the notice empties the cache.
    await heard("token_balances", () =>
      upsertReadings(tdb.database.db, [{ token: DEMO, holder: holder(1), balance: 7n, blockNumber: 3 }]),
    );
    const now = await bodies(url);
    expect(now.cached).toBe(now.uncached);
    const after = JSON.parse(now.cached) as { total: number; holders: { balance: string }[] };
    expect(after.total).toBe(3);
    expect(after.holders.map((h) => h.balance)).toEqual(["5000000000000000000", "2000000000000000000", "7"]);
  });

  test("behavior: an address view's token balances are kept until a balance change is committed", async () => {
    const url = `/api/address/${holder(2)}`;
    const before = (await bodies(url)).cached;
    expect(JSON.parse(before)).toMatchObject({ tokenBalances: [{ tokenBalance: "2000000000000000000" }] });
    await unheard("token_balances", () =>
      upsertReadings(tdb.database.db, [{ token: DEMO, holder: holder(2), balance: 3n, blockNumber: 4 }]),
    );
    expect((await bodies(url)).cached).toBe(before);
    await heard("token_balances", () =>
      upsertReadings(tdb.database.db, [{ token: DEMO, holder: holder(9), balance: 1n, blockNumber: 5 }]),
    );
    const now = await bodies(url);
    expect(now.cached).toBe(now.uncached);
    expect(JSON.parse(now.cached)).toMatchObject({ tokenBalances: [{ tokenBalance: "3" }] });
  });

  test("behavior: a replica's indexer section follows the committed cursor", async () => {
    const indexed = async (app: FastifyInstance) =>
      ((await app.inject({ url: "/api/stats" })).json() as { indexer: { indexedBlock: number | null } })
        .indexer.indexedBlock;
    const setCursor = (block: number) =>
      tdb.database.db.execute(
        sql`insert into indexer_cursor (name, block_number, filter_hash) values ('poll', ${block}, 'x')
            on conflict (name) do update set block_number = excluded.block_number`,
      );
    await heard("indexer_cursor", () => setCursor(10));
    expect(await indexed(cached)).toBe(10);
    await unheard("indexer_cursor", () => setCursor(11));
    expect(await indexed(uncached)).toBe(11);
    expect(await indexed(cached)).toBe(10);
    await heard("indexer_cursor", () => setCursor(12));
    expect(await indexed(cached)).toBe(12);
  });
});
