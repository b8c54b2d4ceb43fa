import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { captureQueries, explainQuery } from "../../test/helpers/explain.ts";
import {
  getEtherscanHolders,
  getEtherscanLogs,
  getEtherscanTransactions,
  getEtherscanTransfers,
} from "./etherscanReads.ts";

/**
 * The Etherscan reads on a store large enough for the planner to choose as it does in production: every list
 * walks its index in the order asked for, without sorting an address's or a token's whole history.
 */

const BUSY = `0x${"b".repeat(40)}`;
const TOKEN = `0x${"7".repeat(40)}`;
const BLOCKS = 4000;
const PER_BLOCK = 5;

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase();
  const db = tdb.database.db;
  // 20,000 transactions; BUSY sends every fifth; each moves TOKEN between a sender and a recipient.
  await db.execute(sql`
    insert into transactions (hash, block_number, block_hash, transaction_index, block_timestamp, from_address,
      to_address, value_wei, gas_used, gas_price, status, protocol, action_type, function_name, function_args,
      source, nonce, gas_limit, input, cumulative_gas_used, method_id)
    select '0x' || lpad(to_hex(b * 10 + i), 64, '0'), b, '0x' || lpad(to_hex(b), 64, '0'), i,
      now() - (${BLOCKS} - b) * interval '12 seconds',
      case when i = 0 then ${BUSY} else '0x' || lpad(to_hex(b * 10 + i), 40, '0') end, ${TOKEN}, 0, 50000, 1,
      true, 'p', 'transfer', 'transfer', '{}', 'poll', b, 60000, '0xa9059cbb', 50000 * (i + 1), '0xa9059cbb'
    from generate_series(1, ${BLOCKS}) b, generate_series(0, ${PER_BLOCK - 1}) i`);
  await db.execute(sql`
    insert into token_transfers (tx_hash, log_index, block_number, transaction_index, block_timestamp,
      token_address, from_address, to_address, amount)
    select hash, transaction_index, block_number, transaction_index, block_timestamp, ${TOKEN}, from_address,
      '0x' || lpad(to_hex(block_number), 40, 'c'), 1
    from transactions`);
  await db.execute(sql`
    insert into logs (tx_hash, log_index, block_number, transaction_index, address, topics, data)
    select tx_hash, log_index, block_number, transaction_index, token_address,
      array['0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef', '0x' || lpad(substr(from_address, 3), 64, '0')],
      '0x01'
    from token_transfers`);
  await db.execute(sql`
    insert into address_transactions (address, tx_hash, block_number, transaction_index, protocol)
    select distinct on (address, hash) address, hash, block_number, transaction_index, 'p' from (
      select from_address as address, hash, block_number, transaction_index from transactions
      union all select to_address, hash, block_number, transaction_index from transactions
      union all select '0x' || lpad(to_hex(block_number), 40, 'c'), hash, block_number, transaction_index from transactions
    ) parties`);
  await db.execute(sql`
    insert into token_balances (token_address, holder, balance, block_number)
    select ${TOKEN}, '0x' || lpad(to_hex(n), 40, '0'), n, 1 from generate_series(1, 20000) n`);
  await db.execute(sql`analyze`);
}, 120_000);

afterAll(async () => {
  await tdb?.cleanup();
});

const page = { limit: 100, skip: 0, fromBlock: 0, toBlock: Number.MAX_SAFE_INTEGER };

async function plans(run: () => Promise<unknown>): Promise<string[]> {
  const queries = await captureQueries(tdb.database, run);
  return Promise.all(queries.map((q) => explainQuery(tdb.database, q)));
}

/** A Sort node over a whole history (one that a LIMIT above it does not bound to the page). */
const fullSorts = (plan: string) => plan.split("\n").filter((line) => /(^|->)\s*Sort\s+\(/.test(line));

test("txlist: a page of the busiest address, both orders, from address_transactions_address_block_idx", async () => {
  for (const sort of ["asc", "desc"] as const) {
    const rows = await getEtherscanTransactions(tdb.database.db, BUSY, { ...page, sort });
    expect(rows).toHaveLength(100);
    const first = sort === "asc" ? 1 : BLOCKS;
    expect(rows[0]).toMatchObject({
      blockNumber: first,
      transactionIndex: 0,
      nonce: first,
      methodId: "0xa9059cbb",
    });
    const [plan] = await plans(() => getEtherscanTransactions(tdb.database.db, BUSY, { ...page, sort }));
    expect(plan, plan).toContain("address_transactions_address_block_idx");
    expect(plan, plan).not.toMatch(/Seq Scan on transactions/);
    expect(fullSorts(plan!), plan).toEqual([]);
  }
});

test("tokentx: by address from address_transactions, by token from token_transfers_token_block_idx", async () => {
  const tokens = [TOKEN];
  const byAddress = await getEtherscanTransfers(
    tdb.database.db,
    { address: BUSY, tokens },
    { ...page, sort: "desc" },
  );
  expect(byAddress).toHaveLength(100);
  expect(byAddress[0]).toMatchObject({ blockNumber: BLOCKS, transferFrom: BUSY, tokenAddress: TOKEN });
  const [addressPlan] = await plans(() =>
    getEtherscanTransfers(tdb.database.db, { address: BUSY, tokens }, { ...page, sort: "asc" }),
  );
  expect(addressPlan, addressPlan).toContain("address_transactions_address_block_idx");
  expect(addressPlan, addressPlan).not.toMatch(/Seq Scan on (transactions|token_transfers)/);
  const byToken = await getEtherscanTransfers(
    tdb.database.db,
    { token: TOKEN, tokens },
    { ...page, sort: "desc" },
  );
  expect(byToken.map((r) => [r.blockNumber, r.logIndex]).slice(0, 2)).toEqual([
    [BLOCKS, PER_BLOCK - 1],
    [BLOCKS, PER_BLOCK - 2],
  ]);
  const [tokenPlan] = await plans(() =>
    getEtherscanTransfers(tdb.database.db, { token: TOKEN, tokens }, { ...page, sort: "asc" }),
  );
  expect(tokenPlan, tokenPlan).toContain("token_transfers_token_block_idx");
  expect(fullSorts(tokenPlan!), tokenPlan).toEqual([]);
});

test("tokenholderlist from token_balances_token_balance_idx; getLogs by address and topic", async () => {
  const holders = await getEtherscanHolders(tdb.database.db, TOKEN, { limit: 3, skip: 0 });
  expect(holders).toEqual([
    { holder: `0x${(20000).toString(16).padStart(40, "0")}`, balance: "20000" },
    { holder: `0x${(19999).toString(16).padStart(40, "0")}`, balance: "19999" },
    { holder: `0x${(19998).toString(16).padStart(40, "0")}`, balance: "19998" },
  ]);
  const [holdersPlan] = await plans(() =>
    getEtherscanHolders(tdb.database.db, TOKEN, { limit: 100, skip: 0 }),
  );
  expect(holdersPlan, holdersPlan).toContain("token_balances_token_balance_idx");
  expect(fullSorts(holdersPlan!), holdersPlan).toEqual([]);

  const filter = {
    address: TOKEN,
    topics: [{ position: 0, value: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef" }],
    operators: [],
  };
  const logs = await getEtherscanLogs(tdb.database.db, filter, { ...page, limit: 1000 });
  expect(logs).toHaveLength(1000);
  expect(logs[0]).toMatchObject({ blockNumber: 1, logIndex: 0, address: TOKEN });
});
