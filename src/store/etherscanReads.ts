import { type SQL, sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";

/**
 * Reads behind the Etherscan-compatible API (SPEC §11, docs/etherscan.md). Every list is cut by an index in
 * the requested order, `LIMIT`/`OFFSET` from Etherscan's `page` and `offset` (at most 10,000 rows deep):
 * ascending order walks the same `… DESC NULLS LAST` indexes backwards (`ASC NULLS FIRST`).
 */

export type EtherscanPage = {
  limit: number;
  skip: number;
  sort: "asc" | "desc";
  fromBlock: number;
  toBlock: number;
};

/** A stored transaction with what `txlist` and `tokentx` list of it. */
export type EtherscanTransactionRow = {
  hash: string;
  blockNumber: number;
  blockHash: string;
  transactionIndex: number;
  blockTimestamp: Date;
  fromAddress: string;
  toAddress: string | null;
  contractAddress: string | null;
  valueWei: string;
  gasUsed: string;
  gasPrice: string;
  status: boolean;
  functionName: string;
  actionType: string;
  nonce: number | null;
  gasLimit: string | null;
  input: string | null;
  cumulativeGasUsed: string | null;
  methodId: string | null;
};

export type EtherscanTransferRow = EtherscanTransactionRow & {
  logIndex: number;
  tokenAddress: string;
  transferFrom: string;
  transferTo: string;
  amount: string;
};

const direction = (sort: "asc" | "desc") =>
  sort === "asc" ? sql.raw("asc nulls first") : sql.raw("desc nulls last");

const TX_COLUMNS = sql.raw(`t.hash, t.block_number as "blockNumber", t.block_hash as "blockHash",
  t.transaction_index as "transactionIndex", t.block_timestamp as "blockTimestamp",
  t.from_address as "fromAddress", t.to_address as "toAddress", t.contract_address as "contractAddress",
  t.value_wei::text as "valueWei", t.gas_used::text as "gasUsed", t.gas_price::text as "gasPrice", t.status,
  t.function_name as "functionName", t.action_type as "actionType", t.nonce, t.gas_limit::text as "gasLimit",
  t.input, t.cumulative_gas_used::text as "cumulativeGasUsed", t.method_id as "methodId"`);

type RawTransaction = Omit<EtherscanTransactionRow, "blockTimestamp" | "blockNumber" | "nonce"> & {
  blockTimestamp: Date | string;
  blockNumber: number | string;
  nonce: number | string | null;
};

function toTransactionRow(row: RawTransaction): EtherscanTransactionRow {
  return {
    ...row,
    blockNumber: Number(row.blockNumber),
    transactionIndex: Number(row.transactionIndex),
    blockTimestamp: new Date(row.blockTimestamp),
    nonce: row.nonce === null ? null : Number(row.nonce),
  };
}

/**
 * `txlist`: the stored transactions an address (lowercase) sent, received or created, cut from
 * `address_transactions_address_block_idx` (its rows also name token-transfer parties, filtered out here).
 */
export async function getEtherscanTransactions(
  db: Db,
  address: string,
  page: EtherscanPage,
): Promise<EtherscanTransactionRow[]> {
  const order = direction(page.sort);
  // The transaction is read per index entry (a LATERAL subquery that `offset 0` keeps from being flattened),
  // so the page stops the index walk: joined freely, the planner may scan every transaction for the
  // sender/recipient filter, whose selectivity it cannot know, then sort.
  const result = await db.execute<RawTransaction>(sql`
    select ${TX_COLUMNS}
    from address_transactions a
    cross join lateral (
      select * from transactions t where t.hash = a.tx_hash
        and (t.from_address = ${address} or t.to_address = ${address} or t.contract_address = ${address})
      offset 0
    ) t
    where a.address = ${address}
      and a.block_number between ${page.fromBlock} and ${page.toBlock}
    order by a.block_number ${order}, a.transaction_index ${order}
    limit ${page.limit} offset ${page.skip}`);
  return result.rows.map((row) => toTransactionRow(row as RawTransaction));
}

export type TransfersFilter = {
  address?: string | undefined;
  token?: string | undefined;
  tokens: readonly string[];
};

/**
 * `tokentx`: transfers of tracked tokens (`tokens`) by a party `address` and/or a `token`, each with its
 * transaction. By address: cut from `address_transactions_address_block_idx`, then the transaction's transfers
 * by their primary key (`token_transfers_block_tx_log_pk`); by token alone: `token_transfers_token_block_idx`.
 */
export async function getEtherscanTransfers(
  db: Db,
  filter: TransfersFilter,
  page: EtherscanPage,
): Promise<EtherscanTransferRow[]> {
  if (filter.tokens.length === 0) return [];
  const order = direction(page.sort);
  const tracked = sql`tt.token_address in (${sql.join(
    filter.tokens.map((t) => sql`${t}`),
    sql`, `,
  )})`;
  const transferColumns = sql.raw(`tt.log_index as "logIndex", tt.token_address as "tokenAddress",
    tt.from_address as "transferFrom", tt.to_address as "transferTo", tt.amount::text as "amount"`);
  let query: SQL;
  if (filter.address !== undefined) {
    const token = filter.token === undefined ? sql`` : sql`and tt.token_address = ${filter.token}`;
    // Per index entry, its transfers by key and its transaction by hash (fenced as in txlist).
    query = sql`
      select ${TX_COLUMNS}, ${transferColumns}
      from address_transactions a
      cross join lateral (
        select * from token_transfers tt where tt.block_number = a.block_number and tt.tx_hash = a.tx_hash
          and (tt.from_address = ${filter.address} or tt.to_address = ${filter.address})
          and ${tracked} ${token}
        order by tt.log_index ${order}
        offset 0
      ) tt
      cross join lateral (select * from transactions t where t.hash = a.tx_hash offset 0) t
      where a.address = ${filter.address}
        and a.block_number between ${page.fromBlock} and ${page.toBlock}
      order by a.block_number ${order}, a.transaction_index ${order}, tt.log_index ${order}
      limit ${page.limit} offset ${page.skip}`;
  } else {
    query = sql`
      select ${TX_COLUMNS}, ${transferColumns}
      from token_transfers tt
      join transactions t on t.hash = tt.tx_hash
      where tt.token_address = ${filter.token ?? ""}
        and tt.block_number between ${page.fromBlock} and ${page.toBlock}
        and ${tracked}
      order by tt.block_number ${order}, tt.log_index ${order}
      limit ${page.limit} offset ${page.skip}`;
  }
  const result = await db.execute<RawTransaction & Record<string, unknown>>(query);
  return result.rows.map((raw) => {
    const row = raw as RawTransaction & {
      logIndex: number | string;
      tokenAddress: string;
      transferFrom: string;
      transferTo: string;
      amount: string;
    };
    return {
      ...toTransactionRow(row),
      logIndex: Number(row.logIndex),
      tokenAddress: row.tokenAddress,
      transferFrom: row.transferFrom,
      transferTo: row.transferTo,
      amount: row.amount,
    };
  });
}

/** `tokenholderlist`: holders with a balance above zero, largest first (`token_balances_token_balance_idx`). */
export async function getEtherscanHolders(
  db: Db,
  token: string,
  page: { limit: number; skip: number },
): Promise<{ holder: string; balance: string }[]> {
  const result = await db.execute<{ holder: string; balance: string }>(sql`
    select holder, balance::text as balance from token_balances
    where token_address = ${token} and balance > 0
    order by token_balances.balance desc nulls last, token_balances.holder
    limit ${page.limit} offset ${page.skip}`);
  return result.rows.map((row) => ({ holder: String(row.holder), balance: String(row.balance) }));
}

/** `tokenbalance`: the stored balance of a holder (null when none is stored), primary-key read. */
export async function getEtherscanTokenBalance(
  db: Db,
  token: string,
  holder: string,
): Promise<string | null> {
  const result = await db.execute<{ balance: string }>(sql`
    select balance::text as balance from token_balances where token_address = ${token} and holder = ${holder}`);
  const row = result.rows[0];
  return row === undefined ? null : String(row.balance);
}

export type LogsFilter = {
  address?: string | undefined;
  /** topic position (0-3) -> value */
  topics: readonly { position: number; value: string }[];
  /** between topics[i - 1] and topics[i]: `and` or `or` (applied left to right) */
  operators: readonly ("and" | "or")[];
};

export type EtherscanLogRow = {
  address: string;
  topics: string[];
  data: string;
  blockNumber: number;
  blockHash: string;
  blockTimestamp: Date;
  gasPrice: string;
  gasUsed: string;
  logIndex: number;
  txHash: string;
  transactionIndex: number;
};

/**
 * `getLogs`: stored logs in a block range, by emitter and topics, oldest first, cut from the logs' primary key
 * (`logs_block_tx_log_pk`, block first) and joined to their transaction for its block hash, time and gas.
 */
export async function getEtherscanLogs(
  db: Db,
  filter: LogsFilter,
  page: Omit<EtherscanPage, "sort">,
): Promise<EtherscanLogRow[]> {
  const conditions: SQL[] = [sql`l.block_number between ${page.fromBlock} and ${page.toBlock}`];
  if (filter.address !== undefined) conditions.push(sql`l.address = ${filter.address}`);
  if (filter.topics.length > 0) {
    let expression: SQL | undefined;
    filter.topics.forEach((topic, i) => {
      const condition = sql`l.topics[${sql.raw(String(topic.position + 1))}] = ${topic.value}`;
      expression =
        expression === undefined
          ? condition
          : sql`(${expression} ${sql.raw(filter.operators[i - 1] === "or" ? "or" : "and")} ${condition})`;
    });
    if (expression !== undefined) conditions.push(expression);
  }
  const result = await db.execute<Record<string, unknown>>(sql`
    select l.address, l.topics, l.data, l.block_number as "blockNumber", t.block_hash as "blockHash",
      t.block_timestamp as "blockTimestamp", t.gas_price::text as "gasPrice", t.gas_used::text as "gasUsed",
      l.log_index as "logIndex", l.tx_hash as "txHash", l.transaction_index as "transactionIndex"
    from logs l
    join transactions t on t.hash = l.tx_hash
    where ${sql.join(conditions, sql` and `)}
    order by l.block_number asc nulls first, l.transaction_index, l.log_index
    limit ${page.limit} offset ${page.skip}`);
  return result.rows.map((row) => ({
    address: String(row.address),
    topics: parseTextArray(row.topics),
    data: String(row.data),
    blockNumber: Number(row.blockNumber),
    blockHash: String(row.blockHash),
    blockTimestamp: new Date(row.blockTimestamp as string),
    gasPrice: String(row.gasPrice),
    gasUsed: String(row.gasUsed),
    logIndex: Number(row.logIndex),
    txHash: String(row.txHash),
    transactionIndex: Number(row.transactionIndex),
  }));
}

/** A `text[]` as the driver gives it: an array (node-postgres, PGlite) or PostgreSQL's `{a,b}` literal. */
function parseTextArray(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  const text = String(value);
  if (text === "{}") return [];
  return text
    .slice(1, -1)
    .split(",")
    .map((t) => t.replace(/^"|"$/g, ""));
}
