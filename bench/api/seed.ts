import type { Config } from "../../src/config/schema.ts";
import { commitBatch } from "../../src/store/commitBatch.ts";
import type { Db } from "../../src/store/createDatabase.ts";
import { CURSOR_NAME } from "../../src/store/indexerState.ts";
import { upsertPrices } from "../../src/store/priceStore.ts";
import { getGlobalCounts, getProtocolCounts } from "../../src/store/statsReads.ts";
import { getTokenCounts, getTopHolders } from "../../src/store/tokenReads.ts";
import { BENCH_PRICES, BENCH_TOKENS } from "./apiBenchConfig.ts";
import type { Dataset } from "./dataset.ts";

export type SeedResult = { seconds: number; transactions: number; transfers: number; logs: number };

/**
 * Store the dataset through the store's own write path, `commitBatch` (one database transaction per batch of
 * 500 blocks: transactions, logs, transfers, address index, blocks, balance deltas and the polling cursor),
 * so every statement-level trigger fires as it does on ingest; then the prices of the priced tokens.
 */
export async function seedDatabase(
  db: Db,
  config: Config,
  dataset: Dataset,
  progress: (line: string) => void,
): Promise<SeedResult> {
  const started = performance.now();
  const deltaTokens = new Set(config.tokens.map((t) => t.address as string));
  let transactions = 0;
  let transfers = 0;
  let logs = 0;
  let lastReport = started;
  for (const batch of dataset.batches()) {
    await commitBatch(db, {
      source: "poll",
      transactions: batch.transactions,
      blocks: batch.blocks,
      deltaTokens,
      cursor: { name: CURSOR_NAME, blockNumber: batch.lastBlock, filterHash: "api-bench" },
    });
    transactions += batch.transactions.length;
    for (const tx of batch.transactions) {
      transfers += tx.transfers.length;
      logs += tx.logs.length;
    }
    if (performance.now() - lastReport > 5000) {
      lastReport = performance.now();
      progress(`  seeded ${transactions} transactions…`);
    }
  }
  const now = new Date();
  await upsertPrices(
    db,
    Object.entries(BENCH_PRICES).map(([symbol, p]) => ({
      tokenAddress: BENCH_TOKENS[symbol as keyof typeof BENCH_TOKENS].address,
      priceUsd: p.usd,
      source: p.source,
      priceAt: now,
      fetchedAt: now,
    })),
  );
  return { seconds: (performance.now() - started) / 1000, transactions, transfers, logs };
}

/**
 * Compare what the database maintained (trigger counters, delta balances) with the generator's own account.
 * Throws listing every difference: a benchmark on wrong data would measure nothing useful.
 */
export async function verifySeed(db: Db, dataset: Dataset): Promise<void> {
  const e = dataset.expectations;
  const problems: string[] = [];
  const check = (what: string, actual: unknown, expected: unknown) => {
    if (actual !== expected)
      problems.push(`${what}: database ${String(actual)}, expected ${String(expected)}`);
  };
  const global = await getGlobalCounts(db);
  const tokens = e.tokens();
  check("transactions", global.transactions, e.transactions());
  check(
    "token transfers",
    global.tokenTransfers,
    [...tokens.values()].reduce((n, t) => n + t.transfers, 0),
  );
  check("addresses", global.addresses, e.addresses());
  for (const [id, p] of e.protocols()) {
    const counts = await getProtocolCounts(db, id);
    check(`${id} transactions`, counts.transactionCount, p.transactions);
    check(`${id} unique users`, counts.uniqueUsers, p.users);
  }
  for (const [token, t] of tokens) {
    const counts = await getTokenCounts(db, token);
    check(`${token} transfers`, counts.transfersCount, t.transfers);
    check(`${token} holders`, counts.holdersCount, t.holders);
  }
  const demo = BENCH_TOKENS.DEMO.address;
  for (const offset of [0, 5000]) {
    const stored = await getTopHolders(db, demo, { limit: 25, offset });
    const expected = e.topHolders(demo, 25, offset);
    check(
      `DEMO holders page at offset ${offset}`,
      stored.map((h) => `${h.holder}=${h.balance}`).join(","),
      expected.map((h) => `${h.holder}=${h.balance}`).join(","),
    );
  }
  if (problems.length > 0)
    throw new Error(`the seeded database is not what was generated:\n  ${problems.join("\n  ")}`);
}
