import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { captureQueries, explainQuery } from "../../test/helpers/explain.ts";
import { getAddressTransactions } from "./addressReads.ts";
import type { Db } from "./createDatabase.ts";
import { getProtocolTransactions } from "./protocolReads.ts";
import { findBlockByNumber } from "./searchReads.ts";

const hex = (i: number, width: number) => `0x${i.toString(16).padStart(width, "0")}`;
const SENDER = hex(7, 40);
const ROUTER = hex(0x4242, 40);

/**
 * 9,000 transactions in 900 blocks of 10, three protocols, four actions, 1,500 senders; every transaction
 * also has the shared router as a party. Written with plain SQL, the triggers fill the counters.
 */
async function seed(db: Db) {
  await db.execute(sql`
    insert into transactions (hash, block_number, block_hash, transaction_index, block_timestamp, from_address,
      to_address, value_wei, gas_used, gas_price, status, protocol, action_type, function_name, function_args, source)
    select '0x' || lpad(to_hex(i), 64, '0'), i / 10, '0x' || lpad(to_hex(i / 10), 64, '0'), i % 10, now(),
      '0x' || lpad(to_hex(i % 1500), 40, '0'), ${ROUTER}, 0, 1, 1, true,
      (array['swap', 'vault', 'bridge'])[1 + i % 3], (array['swap', 'transfer', 'deposit', 'claim'])[1 + i % 4],
      'f', '{}', 'poll'
    from generate_series(0::bigint, 8999::bigint) i`);
  await db.execute(sql`
    insert into address_transactions (address, tx_hash, block_number, transaction_index, protocol)
    select a, hash, block_number, transaction_index, protocol
    from transactions, lateral (values (from_address), (to_address)) parties(a)`);
  await db.execute(sql`analyze transactions`);
  await db.execute(sql`analyze address_transactions`);
}

describe("protocolReads, addressReads, searchReads", () => {
  let tdb: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = tdb.database.db;
    await seed(db);
  });
  afterAll(async () => {
    await tdb?.cleanup();
  });

  test("default: pages are newest first and a keyset position continues strictly after it", async () => {
    const first = await getProtocolTransactions(db, "vault", { limit: 5, offset: 0 });
    expect(first.map((d) => [d.tx.blockNumber, d.tx.transactionIndex])).toEqual([
      [899, 8],
      [899, 5],
      [899, 2],
      [898, 9],
      [898, 6],
    ]);
    const next = await getProtocolTransactions(db, "vault", {
      limit: 2,
      offset: 0,
      before: { blockNumber: 898, transactionIndex: 6 },
    });
    expect(next.map((d) => [d.tx.blockNumber, d.tx.transactionIndex])).toEqual([
      [898, 3],
      [898, 0],
    ]);
    const mine = await getAddressTransactions(db, SENDER, { limit: 3, offset: 1 });
    // Sender 7 sends transactions 7, 1507, 3007, … (i % 1500 = 7): newest first, one skipped.
    expect(mine.map((d) => d.tx.hash)).toEqual([6007, 4507, 3007].map((i) => hex(i, 64)));
    expect(await findBlockByNumber(db, 3)).toMatchObject({
      number: 3,
      hash: null,
      transactions: Array.from({ length: 10 }, (_, i) => hex(30 + i, 64)),
    });
    expect(await findBlockByNumber(db, 5000)).toBeNull();
  });

  test("behavior: every list query walks its index (no sort, no sequential scan)", async () => {
    const before = { blockNumber: 600, transactionIndex: 4 };
    const cases: [string, () => Promise<unknown>][] = [
      ["protocol page", () => getProtocolTransactions(db, "swap", { limit: 26, offset: 0 })],
      [
        "protocol page by cursor",
        () => getProtocolTransactions(db, "swap", { limit: 26, offset: 0, before }),
      ],
      [
        "protocol page of an action",
        () => getProtocolTransactions(db, "bridge", { limit: 26, offset: 0, before, actionType: "claim" }),
      ],
      ["address page", () => getAddressTransactions(db, ROUTER, { limit: 26, offset: 0 })],
      ["address page by cursor", () => getAddressTransactions(db, ROUTER, { limit: 26, offset: 0, before })],
      [
        "address page of a protocol",
        () => getAddressTransactions(db, ROUTER, { limit: 26, offset: 0, before, protocol: "vault" }),
      ],
      ["block search", () => findBlockByNumber(db, 600)],
    ];
    for (const [name, run] of cases) {
      const [query] = await captureQueries(tdb.database, run);
      const plan = await explainQuery(tdb.database, query!);
      expect(plan, `${name}:\n${plan}`).not.toMatch(/Seq Scan|Sort/);
    }
  });
});
