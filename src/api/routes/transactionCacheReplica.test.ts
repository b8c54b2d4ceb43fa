import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../../../test/helpers/db.ts";
import { testCommon, testConfig } from "../../chain/_test/testCommon.ts";
import { createChainClient } from "../../chain/createChainClient.ts";
import { swapTransaction } from "../../realtime/_test/fixtures.ts";
import type { HubEvent } from "../../realtime/createHub.ts";
import { createPgFanout, type PgFanout } from "../../realtime/createPgFanout.ts";
import { commitBatch } from "../../store/commitBatch.ts";
import { removeBlocks } from "../../store/removeBlocks.ts";
import { buildApp } from "../buildApp.ts";
import { transactionJsonOf } from "../toTransactionJson.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as const;
const blockHash = (n: number) => `0x${(2000 + n).toString(16).padStart(64, "0")}` as const;
const tx = (n: number) => swapTransaction({ hash: hash(n), blockNumber: n, blockHash: blockHash(n) });
const header = (n: number) => ({
  number: n,
  hash: blockHash(n),
  parentHash: blockHash(n - 1),
  timestamp: new Date("2026-11-21T08:00:00.000Z"),
});

/**
 * The transaction caches of an API replica (`--role api` on PostgreSQL): its events are the PostgreSQL fan-out
 * (`createPgFanout`, as `startProtoscan` wires it), fed by another process's commits through the outbox. A
 * rollback written by the writer reaches the replica as `removed` events, after which its cached body is gone.
 */
describe.skipIf(testDatabaseUrl() === undefined)("transaction caches on an API replica (PostgreSQL)", () => {
  let tdb: TestDatabase;
  let fanout: PgFanout;
  let replica: FastifyInstance;
  const heard: HubEvent[] = [];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    if (tdb.database.kind !== "postgres") throw new Error("expected PostgreSQL");
    const config = testConfig({ urls: ["http://127.0.0.1:9"] });
    const common = testCommon(config);
    fanout = createPgFanout(common, {
      database: tdb.database,
      transactionJson: transactionJsonOf(config),
      options: { pollIntervalMs: 200, reconnectDelayMs: 100 },
    });
    await fanout.start();
    replica = await buildApp(common, {
      database: tdb.database,
      chain: createChainClient(common),
      events: fanout,
    });
    // Subscribed after the app's caches: when this listener hears an event, they have heard it.
    fanout.subscribe((event) => heard.push(event));
  });
  afterAll(async () => {
    await replica?.close();
    await fanout?.stop();
    await tdb?.cleanup();
  });

  async function until(check: () => boolean, what: string) {
    const started = Date.now();
    while (!check()) {
      if (Date.now() - started > 10_000) throw new Error(`${what}: not within 10 s`);
      await sleep(20);
    }
  }

  test("behavior: a rollback of the block makes GET /api/tx/:hash answer 404 TX_NOT_FOUND once the replica hears it", async () => {
    await commitBatch(tdb.database.db, {
      source: "poll",
      transactions: [tx(1), tx(2)],
      blocks: [header(1), header(2)],
      deltaTokens: new Set(),
      outbox: true,
    });
    await until(() => heard.filter((e) => e.type === "transaction").length === 2, "the stored transactions");
    const url = `/api/tx/${hash(2)}`;
    const first = await replica.inject({ url });
    expect(first.statusCode).toBe(200);
    expect((await replica.inject({ url })).body).toBe(first.body); // kept

    await removeBlocks(tdb.database.db, { after: 1 }, new Set(), undefined, { outbox: true });
    await until(() => heard.some((e) => e.type === "removed"), "the removal");
    const gone = await replica.inject({ url });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({ code: "TX_NOT_FOUND" });
    expect((await replica.inject({ url: `/api/tx/${hash(1)}` })).json()).toMatchObject({ txHash: hash(1) });
  });
});
