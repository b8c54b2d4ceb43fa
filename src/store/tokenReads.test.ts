import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { applyDeltas, upsertReadings } from "./balanceWrites.ts";
import type { Database, Db } from "./createDatabase.ts";
import { removeBlocks } from "./removeBlocks.ts";
import { prices, tokenBalances, tokenStats, tokenTransfers } from "./schema.ts";
import {
  getHoldersPage,
  getTokenCounts,
  getTokenPrice,
  getTokenTransfers,
  getTopHolders,
} from "./tokenReads.ts";

const A = `0x${"a".repeat(40)}`;
const B = `0x${"b".repeat(40)}`;
const TOKEN = `0x${"1".repeat(40)}`;
const OTHER = `0x${"2".repeat(40)}`;
const ZERO = `0x${"0".repeat(40)}`;
const holder = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;

type Transfer = typeof tokenTransfers.$inferInsert;
const transfer = (
  token: string,
  block: number,
  logIndex: number,
  from: string,
  to: string,
  amount = 1n,
): Transfer => ({
  txHash: `0x${block.toString(16).padStart(32, "0")}${logIndex.toString(16).padStart(32, "0")}`,
  logIndex,
  blockNumber: block,
  transactionIndex: 0,
  blockTimestamp: new Date(block * 1000),
  tokenAddress: token,
  fromAddress: from,
  toAddress: to,
  amount,
});

/** The counters recomputed from scratch, to compare with what the triggers maintained. */
async function recount(db: Db) {
  const result = await db.execute<{ token: string; transfers: string; holders: string }>(sql`
    select token as token, sum(t)::text as transfers, sum(h)::text as holders from (
      select token_address as token, count(*) as t, 0 as h from token_transfers group by 1
      union all
      select token_address, 0, count(*) from token_balances where balance > 0 group by 1
    ) c group by token order by token`);
  return Object.fromEntries(
    result.rows.map((r) => [
      r.token,
      { holdersCount: Number(r.holders), transfersCount: Number(r.transfers) },
    ]),
  );
}

async function counters(db: Db) {
  const rows = await db.select().from(tokenStats).orderBy(tokenStats.tokenAddress);
  return Object.fromEntries(
    rows
      .filter((r) => r.holdersCount !== 0 || r.transfersCount !== 0)
      .map((r) => [r.tokenAddress, { holdersCount: r.holdersCount, transfersCount: r.transfersCount }]),
  );
}

describe("tokenReads", () => {
  let tdb: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = tdb.database.db;
  });
  afterAll(async () => {
    await tdb?.cleanup();
  });
  beforeEach(async () => {
    await db.execute(sql`truncate token_transfers, token_balances, token_stats, prices`);
  });

  test("behavior: token_stats follows ingest, balance upserts and a rollback exactly", async () => {
    // What commitBatch does: insert transfers, then apply their deltas (the zero address is no holder).
    const batch = [
      transfer(TOKEN, 10, 0, ZERO, A, 100n),
      transfer(TOKEN, 10, 1, A, B, 40n),
      transfer(TOKEN, 11, 0, B, A, 40n),
      transfer(OTHER, 11, 1, ZERO, B, 5n),
    ];
    await db.insert(tokenTransfers).values(batch);
    await applyDeltas(db, [
      { token: TOKEN, holder: A, delta: 100n, blockNumber: 11 },
      { token: TOKEN, holder: B, delta: 0n, blockNumber: 11 },
      { token: OTHER, holder: B, delta: 5n, blockNumber: 11 },
    ]);
    expect(await counters(db)).toEqual({
      [TOKEN]: { holdersCount: 1, transfersCount: 3 },
      [OTHER]: { holdersCount: 1, transfersCount: 1 },
    });
    expect(await getTokenCounts(db, TOKEN.toUpperCase().replace("0X", "0x"))).toEqual({
      holdersCount: 1,
      transfersCount: 3,
    });

    // Block 12: B gets TOKEN (insert of an existing zero row = update 0 -> 40), A drops to zero elsewhere.
    await db.insert(tokenTransfers).values([transfer(TOKEN, 12, 0, A, B, 100n)]);
    await applyDeltas(db, [
      { token: TOKEN, holder: A, delta: -100n, blockNumber: 12 },
      { token: TOKEN, holder: B, delta: 100n, blockNumber: 12 },
    ]);
    // A call-mode reading: an older one is ignored (no update, no count change), a newer one applies.
    await upsertReadings(db, [{ token: OTHER as never, holder: A as never, balance: 7n, blockNumber: 12 }]);
    await upsertReadings(db, [{ token: OTHER as never, holder: B as never, balance: 9n, blockNumber: 1 }]);
    expect(await counters(db)).toEqual(await recount(db));
    expect(await counters(db)).toEqual({
      [TOKEN]: { holdersCount: 1, transfersCount: 4 },
      [OTHER]: { holdersCount: 2, transfersCount: 1 },
    });

    // A reorg drops block 12: transfers deleted, delta balances restored by negation.
    const rollback = await removeBlocks(db, { after: 11 }, new Set([TOKEN]));
    expect(rollback.removed).toEqual([]);
    expect(await counters(db)).toEqual(await recount(db));
    expect(await getTokenCounts(db, TOKEN)).toEqual({ holdersCount: 1, transfersCount: 3 });
    const balances = await db.select().from(tokenBalances).orderBy(tokenBalances.holder);
    expect(balances.filter((b) => b.tokenAddress === TOKEN).map((b) => [b.holder, b.balance])).toEqual([
      [A, 100n],
      [B, 0n],
    ]);

    await db.delete(tokenBalances).where(sql`${tokenBalances.tokenAddress} = ${OTHER}`);
    expect(await counters(db)).toEqual(await recount(db));
    await db.execute(sql`truncate token_transfers`);
    await db.execute(sql`truncate token_balances`);
    expect(await counters(db)).toEqual({});
  });

  test("default: counters and price of an unknown token are zero and null", async () => {
    expect(await getTokenCounts(db, TOKEN)).toEqual({ holdersCount: 0, transfersCount: 0 });
    expect(await getTokenPrice(db, TOKEN)).toBeNull();
    const at = new Date("2026-11-21T08:00:00.123Z");
    await db.insert(prices).values({ tokenAddress: TOKEN, priceUsd: 0.5, source: "dex", priceAt: at });
    expect(await getTokenPrice(db, TOKEN.toUpperCase().replace("0X", "0x"))).toEqual({
      priceUsd: 0.5,
      source: "dex",
      priceAt: at,
    });
  });

  test("default: holders by balance desc, ties by address, zero balances skipped", async () => {
    const rows = [
      { holder: holder(3), balance: 5n },
      { holder: holder(1), balance: 5n },
      { holder: holder(2), balance: 10n ** 30n },
      { holder: holder(4), balance: 0n },
      { holder: holder(5), balance: 1n },
    ];
    await db
      .insert(tokenBalances)
      .values(rows.map((r) => ({ tokenAddress: TOKEN, ...r, blockNumber: 1 })))
      .execute();
    await db
      .insert(tokenBalances)
      .values({ tokenAddress: OTHER, holder: holder(9), balance: 99n, blockNumber: 1 });
    const all = await getTopHolders(db, TOKEN, { limit: 100, offset: 0 });
    expect(all).toEqual([
      { holder: holder(2), balance: 10n ** 30n },
      { holder: holder(1), balance: 5n },
      { holder: holder(3), balance: 5n },
      { holder: holder(5), balance: 1n },
    ]);
    expect(await getTopHolders(db, TOKEN, { limit: 2, offset: 1 })).toEqual(all.slice(1, 3));
    expect(await getTokenCounts(db, TOKEN)).toMatchObject({ holdersCount: 4 });
    // The one-statement page: the same rows with the counter, an empty page past the end, nothing unknown.
    expect(await getHoldersPage(db, TOKEN, { limit: 100, offset: 0 })).toEqual({ total: 4, holders: all });
    expect(await getHoldersPage(db, TOKEN, { limit: 2, offset: 1 })).toEqual({
      total: 4,
      holders: all.slice(1, 3),
    });
    expect(await getHoldersPage(db, TOKEN, { limit: 2, offset: 4 })).toEqual({ total: 4, holders: [] });
    expect(await getHoldersPage(db, ZERO, { limit: 2, offset: 0 })).toEqual({ total: 0, holders: [] });
  });

  test("default: transfers newest first, by party (self-transfer once), block range and keyset", async () => {
    const rows = [
      transfer(TOKEN, 5, 0, ZERO, A),
      transfer(TOKEN, 5, 3, A, B),
      transfer(TOKEN, 6, 1, B, B),
      transfer(TOKEN, 7, 0, A, A),
      transfer(TOKEN, 7, 2, B, ZERO),
      transfer(OTHER, 7, 3, A, B),
    ];
    await db.insert(tokenTransfers).values(rows);
    const key = (r: { blockNumber: number; logIndex: number }) => `${r.blockNumber}:${r.logIndex}`;
    const base = { limit: 10, offset: 0 };

    expect((await getTokenTransfers(db, TOKEN, base)).map(key)).toEqual(["7:2", "7:0", "6:1", "5:3", "5:0"]);
    expect((await getTokenTransfers(db, TOKEN, { ...base, party: B })).map(key)).toEqual([
      "7:2",
      "6:1",
      "5:3",
    ]);
    expect(
      (await getTokenTransfers(db, TOKEN, { ...base, party: A.toUpperCase().replace("0X", "0x") })).map(key),
    ).toEqual(["7:0", "5:3", "5:0"]);
    expect((await getTokenTransfers(db, TOKEN, { ...base, fromBlock: 6, toBlock: 6 })).map(key)).toEqual([
      "6:1",
    ]);
    expect(
      (await getTokenTransfers(db, TOKEN, { ...base, before: { blockNumber: 7, logIndex: 0 } })).map(key),
    ).toEqual(["6:1", "5:3", "5:0"]);
    expect(
      (
        await getTokenTransfers(db, TOKEN, {
          limit: 1,
          offset: 1,
          party: A,
          before: { blockNumber: 7, logIndex: 2 },
        })
      ).map(key),
    ).toEqual(["5:3"]);
    const [first] = await getTokenTransfers(db, TOKEN, { limit: 1, offset: 0 });
    expect(first).toEqual({ ...rows[4], txHash: rows[4]!.txHash });
  });

  test("behavior: every list query walks its index (no sort of a token's history)", async () => {
    await db.execute(sql`
      insert into token_transfers (tx_hash, log_index, block_number, transaction_index, block_timestamp,
        token_address, from_address, to_address, amount)
      select lpad(to_hex(i), 66, '0'), i % 7, i / 7, 0, now(), case when i % 4 = 0 then ${OTHER} else ${TOKEN} end,
        '0x' || lpad(to_hex((i * 7919) % 3000), 40, '0'), '0x' || lpad(to_hex((i * 104729) % 3000), 40, '0'), i
      from generate_series(1::bigint, 8000::bigint) i`);
    await db.execute(sql`
      insert into token_balances
      select t, '0x' || lpad(to_hex(i), 40, '0'), i % 500, 1
      from generate_series(1, 3000) i, (values (${TOKEN}), (${OTHER})) tokens(t)`);
    await db.execute(sql`analyze token_transfers`);
    await db.execute(sql`analyze token_balances`);
    const party = holder(7919 % 3000);
    const before = { blockNumber: 900, logIndex: 3 };
    const cases: [string, () => Promise<unknown>, string[]][] = [
      [
        "holders",
        () => getTopHolders(db, TOKEN, { limit: 26, offset: 1000 }),
        ["token_balances_token_balance_idx"],
      ],
      [
        "holders page with its count",
        () => getHoldersPage(db, TOKEN, { limit: 26, offset: 1000 }),
        ["token_balances_token_balance_idx", "token_stats_pkey"],
      ],
      [
        "events",
        () => getTokenTransfers(db, TOKEN, { limit: 26, offset: 0 }),
        ["token_transfers_token_block_idx"],
      ],
      [
        "events by cursor",
        () => getTokenTransfers(db, TOKEN, { limit: 26, offset: 0, before }),
        ["token_transfers_token_block_idx"],
      ],
      [
        "events of a party",
        () => getTokenTransfers(db, TOKEN, { limit: 26, offset: 0, before, party }),
        ["token_transfers_token_from_block_idx", "token_transfers_token_to_block_idx"],
      ],
    ];
    for (const [name, run, indexes] of cases) {
      const [query] = await captureQueries(tdb.database, run);
      const plan = await explain(tdb.database, query!);
      for (const index of indexes) expect(plan, `${name}:\n${plan}`).toContain(index);
      // The only sort allowed is the merge of the two bounded party scans.
      const sorts = plan.split("\n").filter((line) => /(^|->)\s*Sort\s+\(/.test(line));
      expect(sorts.length, `${name}:\n${plan}`).toBeLessThanOrEqual(name === "events of a party" ? 2 : 0);
      expect(plan, `${name}:\n${plan}`).not.toMatch(/Seq Scan|Incremental Sort/);
    }
  });
});

type Captured = { text: string; params: unknown[] };
type Queryable = { query: (...args: unknown[]) => Promise<{ rows: Record<string, unknown>[] }> };

/** The SQL and parameters a store function sends, read at the driver (PGlite client or pg pool). */
async function captureQueries(database: Database, run: () => Promise<unknown>): Promise<Captured[]> {
  const client = (database.kind === "pglite" ? database.client : database.pool) as unknown as Queryable;
  const original = client.query;
  const captured: Captured[] = [];
  client.query = (...args: unknown[]) => {
    const [first, second] = args;
    if (typeof first === "string") captured.push({ text: first, params: (second as unknown[]) ?? [] });
    else {
      const q = first as { text: string; values?: unknown[] };
      captured.push({ text: q.text, params: (second as unknown[] | undefined) ?? q.values ?? [] });
    }
    return original.apply(client, args);
  };
  try {
    await run();
  } finally {
    client.query = original;
  }
  return captured;
}

async function explain(database: Database, query: Captured): Promise<string> {
  const client = (database.kind === "pglite" ? database.client : database.pool) as unknown as Queryable;
  const result = await client.query(`explain ${query.text}`, query.params);
  return result.rows.map((row) => String(row["QUERY PLAN"])).join("\n");
}
