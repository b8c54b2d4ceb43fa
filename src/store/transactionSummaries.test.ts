import { sql } from "drizzle-orm";
import { maxUint256 } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { captureQueries, explainQuery } from "../../test/helpers/explain.ts";
import { DEMO } from "../decode/_test/testRegistry.ts";
import { ALICE, BOB, swapTransaction, transferLog } from "../realtime/_test/fixtures.ts";
import { getAddressTransactions } from "./addressReads.ts";
import { commitBatch } from "./commitBatch.ts";
import type { Db } from "./createDatabase.ts";
import { readEventDetails } from "./outbox.ts";
import { getProtocolTransactions } from "./protocolReads.ts";
import { getRecentTransactions, getTransaction } from "./transactionReads.ts";
import { getTransactionSummaries, type TransactionSummary } from "./transactionSummaries.ts";

const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as const;
const blockHash = (n: number) => `0x${(1000 + n).toString(16).padStart(64, "0")}` as const;
const COUNT = 30;

/** The summary the full rows of `getTransaction` make: decoded logs only, the API's fields, log order. */
async function summaryFromDetails(db: Db, txHash: string): Promise<TransactionSummary | null> {
  const details = await getTransaction(db, txHash);
  if (!details) return null;
  const t = details.tx;
  return {
    // The fields the API shows, as the stored row has them.
    tx: {
      hash: t.hash,
      blockNumber: t.blockNumber,
      blockHash: t.blockHash,
      transactionIndex: t.transactionIndex,
      blockTimestamp: t.blockTimestamp,
      fromAddress: t.fromAddress,
      toAddress: t.toAddress,
      contractAddress: t.contractAddress,
      valueWei: t.valueWei,
      gasUsed: t.gasUsed,
      gasPrice: t.gasPrice,
      status: t.status,
      protocol: t.protocol,
      actionType: t.actionType,
      functionName: t.functionName,
      functionArgs: t.functionArgs,
      source: t.source,
    },
    logs: details.logs
      .filter((l) => l.eventName !== null)
      .map(({ logIndex, address, eventName, eventArgs }) => ({ logIndex, address, eventName, eventArgs })),
    transfers: details.transfers.map(({ logIndex, tokenAddress, fromAddress, toAddress, amount }) => ({
      logIndex,
      tokenAddress,
      fromAddress,
      toAddress,
      amount,
    })),
  };
}

const byLogIndex = (s: TransactionSummary | null) =>
  s && {
    ...s,
    logs: [...s.logs].sort((a, b) => a.logIndex - b.logIndex),
    transfers: [...s.transfers].sort((a, b) => a.logIndex - b.logIndex),
  };

describe("transactionSummaries", () => {
  let tdb: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = tdb.database.db;
    // Swaps in 10 blocks of 3; each also has a log no ABI decodes and a transfer of 2^256 - 1 DEMO.
    const transactions = Array.from({ length: COUNT }, (_, i) => {
      const base = swapTransaction();
      return swapTransaction({
        hash: hash(i + 1),
        blockNumber: 100 + Math.floor(i / 3),
        blockHash: blockHash(100 + Math.floor(i / 3)),
        transactionIndex: i % 3,
        // Every third one (hashes 1, 4, 7, …) with what a JSON number could not carry, failed, at a
        // millisecond: the summary's text encoding must give back the stored values exactly.
        ...(i % 3 === 0
          ? {
              value: maxUint256,
              effectiveGasPrice: 10n ** 30n + 1n,
              gasUsed: 2n ** 63n + 7n,
              status: false,
              blockTimestamp: new Date("2026-11-21T08:00:00.123Z"),
            }
          : {}),
        logs: [
          ...base.logs,
          { logIndex: 2, address: DEMO, topics: [hash(0xdead)], data: "0x" },
          transferLog(3, DEMO, BOB, ALICE, maxUint256),
        ],
      });
    });
    await commitBatch(db, {
      source: "poll",
      transactions,
      blocks: Array.from({ length: 10 }, (_, i) => ({
        number: 100 + i,
        hash: blockHash(100 + i),
        parentHash: blockHash(99 + i),
        timestamp: new Date("2026-11-21T08:00:00.000Z"),
      })),
      deltaTokens: new Set(),
    });
  });
  afterAll(async () => {
    await tdb?.cleanup();
  });

  const getTransactionSummary = async (db: Db, txHash: string) =>
    (await getTransactionSummaries(db, [txHash]))[0] ?? null;

  test("default: one statement, the decoded events and the transfers of the stored rows, amounts exact", async () => {
    const queries = await captureQueries(tdb.database, () => getTransactionSummary(db, hash(7)));
    expect(queries).toHaveLength(1);
    const summary = await getTransactionSummary(db, hash(7).toUpperCase().replace("0X", "0x"));
    expect(byLogIndex(summary)).toEqual(await summaryFromDetails(db, hash(7)));
    expect(summary?.logs.map((l) => l.eventName).sort()).toEqual(["Transfer", "Transfer", "Transfer"]);
    expect(summary?.transfers.find((t) => t.logIndex === 3)?.amount).toBe(maxUint256);
    expect(summary?.tx).toMatchObject({
      valueWei: maxUint256,
      gasPrice: 10n ** 30n + 1n,
      gasUsed: 2n ** 63n + 7n,
      status: false,
      blockTimestamp: new Date("2026-11-21T08:00:00.123Z"),
      toAddress: expect.any(String),
      contractAddress: null,
    });
    expect(await getTransactionSummary(db, hash(999))).toBeNull();
  });

  test("default: several hashes (one not stored) are read in one statement, each as when read alone", async () => {
    const asked = [hash(7), hash(999), hash(3), hash(7)];
    const queries = await captureQueries(tdb.database, () => getTransactionSummaries(db, asked));
    expect(queries).toHaveLength(1);
    const found = await getTransactionSummaries(db, asked);
    expect(found.map((s) => s.tx.hash).sort()).toEqual([hash(3), hash(7)].sort());
    for (const summary of found) expect(summary).toEqual(await getTransactionSummary(db, summary.tx.hash));
  });

  test("default: list reads are one statement each and match the stored rows, newest first", async () => {
    const reads: [string, () => Promise<TransactionSummary[]>][] = [
      ["recent", () => getRecentTransactions(db, { limit: 5 })],
      ["protocol", () => getProtocolTransactions(db, "demoswap", { limit: 5, offset: 4 })],
      ["address", () => getAddressTransactions(db, ALICE, { limit: 5, offset: 4 })],
    ];
    for (const [name, read] of reads) {
      expect(await captureQueries(tdb.database, read), name).toHaveLength(1);
      const page = await read();
      expect(page, name).toHaveLength(5);
      for (const s of page) expect(byLogIndex(s), name).toEqual(await summaryFromDetails(db, s.tx.hash));
    }
    const protocolPage = await getProtocolTransactions(db, "demoswap", { limit: 5, offset: 4 });
    expect(protocolPage.map((s) => s.tx.hash)).toEqual([26, 25, 24, 23, 22].map(hash));
  });

  test("behavior: an offset page reads the events and transfers of its own rows only", async () => {
    const [query] = await captureQueries(tdb.database, () =>
      getAddressTransactions(db, ALICE, { limit: 2, offset: 20 }),
    );
    const driver = (tdb.database.kind === "pglite" ? tdb.database.client : tdb.database.pool) as unknown as {
      query: (text: string, params: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;
    };
    const result = await driver.query(
      `explain (analyze, costs off, timing off) ${query!.text}`,
      query!.params,
    );
    const plan = result.rows.map((r) => String(r["QUERY PLAN"])).join("\n");
    // Each correlated subquery runs once per row of the page (2), not for the 20 rows skipped.
    const loops = [...plan.matchAll(/Aggregate \(actual rows=[\d.]+ loops=(\d+)\)/g)].map((m) =>
      Number(m[1]),
    );
    expect(loops, plan).toEqual([2, 2]);
  });

  test("behavior: a transaction's logs, transfers and parties are read through the block-keyed primary keys", async () => {
    // 5,000 more transactions (blocks 1,001-6,000) with a log, a transfer and two parties
    // each, so that the planner has a reason to choose: no read by hash may scan these tables.
    await db.execute(sql`
      insert into transactions (hash, block_number, block_hash, transaction_index, block_timestamp, from_address,
        to_address, value_wei, gas_used, gas_price, status, protocol, action_type, function_name, function_args, source)
      select '0xaa' || lpad(to_hex(i), 62, '0'), 1000 + i, '0xbb' || lpad(to_hex(i), 62, '0'), 0, now(), ${ALICE}, ${BOB},
        0, 1, 1, true, 'demoswap', 'swap', 'f', '{}', 'poll'
      from generate_series(1, 5000) i`);
    await db.execute(sql`
      insert into logs (tx_hash, log_index, block_number, transaction_index, address, topics, data, event_name,
        event_args)
      select hash, 0, block_number, 0, ${DEMO}, '{}', '0x', 'Transfer', '{}' from transactions where hash like '0xaa%'`);
    await db.execute(sql`
      insert into token_transfers (tx_hash, log_index, block_number, transaction_index, block_timestamp,
        token_address, from_address, to_address, amount)
      select hash, 0, block_number, 0, block_timestamp, ${DEMO}, ${ALICE}, ${BOB}, 1 from transactions
      where hash like '0xaa%'`);
    await db.execute(sql`
      insert into address_transactions (address, tx_hash, block_number, transaction_index, protocol)
      select p.address, t.hash, t.block_number, 0, t.protocol from transactions t
      cross join (values (${ALICE}), (${BOB})) as p(address) where t.hash like '0xaa%'`);
    await db.execute(sql`analyze`);
    const txHash = `0xaa${(1234).toString(16).padStart(62, "0")}`;

    const [byHash] = await captureQueries(tdb.database, () => getTransactionSummary(db, txHash));
    const summaryPlan = await explainQuery(tdb.database, byHash!);
    expect(summaryPlan).toMatch(/Index Scan using logs_block_tx_log_pk on logs/);
    expect(summaryPlan).toMatch(/Index Scan using token_transfers_block_tx_log_pk on token_transfers/);
    expect(summaryPlan).not.toMatch(/Seq Scan/);
    const summary = await getTransactionSummary(db, txHash);
    expect(summary?.logs).toEqual([{ logIndex: 0, address: DEMO, eventName: "Transfer", eventArgs: {} }]);
    expect(summary?.transfers).toEqual([
      { logIndex: 0, tokenAddress: DEMO, fromAddress: ALICE, toAddress: BOB, amount: 1n },
    ]);

    const detailQueries = await captureQueries(tdb.database, () => readEventDetails(db, [txHash]));
    for (const query of detailQueries.slice(1)) {
      expect(await explainQuery(tdb.database, query), query.text).not.toMatch(/Seq Scan/);
    }
    const details = (await readEventDetails(db, [txHash])).get(txHash);
    expect(details?.logs.map((l) => [l.blockNumber, l.logIndex])).toEqual([[2234, 0]]);
    expect(details?.transfers.map((t) => [t.blockNumber, t.logIndex])).toEqual([[2234, 0]]);
    expect(details?.parties.sort()).toEqual([ALICE, BOB].sort());
  });
});
