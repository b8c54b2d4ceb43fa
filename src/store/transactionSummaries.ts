import { sql } from "drizzle-orm";
import type { Db } from "./createDatabase.ts";
import { logs, tokenTransfers, transactions } from "./schema.ts";
import type { LogRow, TransactionRow, TransferRow } from "./transactionReads.ts";

/**
 * Transactions as the read API shows them, each read in ONE statement with its decoded events and its
 * tracked-token transfers (SPEC §4 Transaction: `decodedData.events`, `tokenTransfers`).
 *
 * Why not a page of rows and then their logs and transfers (`withDetails`, three statements): on PGlite every
 * statement is a round trip through the WebAssembly engine and the wire-protocol parser, on PostgreSQL a
 * network round trip; under load they were most of a transaction endpoint's time. Here the page's rows carry
 * two correlated subqueries (each one range of a `(block_number, transaction_index, log_index)` primary key)
 * whose rows come back aggregated as JSON arrays, parsed natively, and only the columns the API shows: logs
 * without topics and data, and only the decoded ones.
 *
 * A list with an offset must cut its page first (a subquery over its index, `limit`/`offset` inside) and join
 * `transactions` to it: subqueries in the select list of a scan under `LIMIT … OFFSET n` run for the n
 * skipped rows too.
 */

/** What the API shows of a transaction's own row (SPEC §4 Transaction), as `toTransactionJson` reads it. */
export type SummaryTx = Pick<
  TransactionRow,
  | "hash"
  | "blockNumber"
  | "blockHash"
  | "transactionIndex"
  | "blockTimestamp"
  | "fromAddress"
  | "toAddress"
  | "contractAddress"
  | "valueWei"
  | "gasUsed"
  | "gasPrice"
  | "status"
  | "protocol"
  | "actionType"
  | "functionName"
  | "functionArgs"
  | "source"
>;
/** A decoded log as the API shows it (`decodedData.events[]`). */
export type EventSummary = Pick<LogRow, "logIndex" | "address" | "eventName" | "eventArgs">;
/** A tracked-token transfer as the API shows it (`tokenTransfers[]`). */
export type TransferSummary = Pick<
  TransferRow,
  "logIndex" | "tokenAddress" | "fromAddress" | "toAddress" | "amount"
>;
/** A stored transaction with what the API shows of its receipt. `logs`: decoded ones only, any order. */
export type TransactionSummary = { tx: SummaryTx; logs: EventSummary[]; transfers: TransferSummary[] };

type EventTuple = [number, string, string, Record<string, unknown> | null];
type TransferTuple = [number, string, string, string, string];
/** A summary as the statement returns it: `SummaryTx`'s fields in order (uint256 as text, time as ms), then both lists. */
type SummaryTuple = [
  string,
  number,
  string,
  number,
  number,
  string,
  string | null,
  string | null,
  string,
  string,
  string,
  boolean,
  string,
  string,
  string,
  Record<string, unknown>,
  string,
  EventTuple[],
  TransferTuple[],
];

/**
 * The select list of a summary query over `transactions`: one text column, `summary`, holding the row's shown
 * fields, its events and its transfers as one JSON array of positional tuples (`toSummary` parses it).
 *
 * Why one JSON text per row: every column of every row costs PGlite a parse in JavaScript and a structured
 * clone from its thread, and node-postgres a parse; the 23 columns of a stored row made that most of a
 * by-hash read. As one text value, parsed here by `JSON.parse`, the same 25 transactions were read in 1.8 ms
 * instead of 2.9 on PGlite (docs/performance.md, "The 2026-11-27 fourth session"). uint256 values and amounts
 * travel as text (a JSON number would lose their precision), the block time as milliseconds since the epoch.
 */
export function summaryFields() {
  // Spelled out with their tables: Drizzle leaves columns unqualified in a one-table select, and inside the
  // subqueries an unqualified "block_number" would name the subquery's own column.
  const l = (column: keyof typeof logs.$inferSelect) => qualified("logs", logs[column].name);
  const x = (column: keyof typeof tokenTransfers.$inferSelect) =>
    qualified("token_transfers", tokenTransfers[column].name);
  const t = (column: keyof typeof transactions.$inferSelect) =>
    qualified("transactions", transactions[column].name);
  return {
    summary: sql<string>`json_build_array(${t("hash")}, ${t("blockNumber")}, ${t("blockHash")},
      ${t("transactionIndex")}, (extract(epoch from ${t("blockTimestamp")}) * 1000)::int8, ${t("fromAddress")},
      ${t("toAddress")}, ${t("contractAddress")}, ${t("valueWei")}::text, ${t("gasUsed")}::text,
      ${t("gasPrice")}::text, ${t("status")}, ${t("protocol")}, ${t("actionType")}, ${t("functionName")},
      ${t("functionArgs")}, ${t("source")},
      (select coalesce(json_agg(json_build_array(${l("logIndex")}, ${l("address")}, ${l("eventName")}, ${l("eventArgs")})), '[]'::json)
        from ${logs} where ${l("blockNumber")} = ${t("blockNumber")} and ${l("transactionIndex")} = ${t("transactionIndex")}
          and ${l("txHash")} = ${t("hash")} and ${l("eventName")} is not null),
      (select coalesce(json_agg(json_build_array(${x("logIndex")}, ${x("tokenAddress")}, ${x("fromAddress")}, ${x("toAddress")}, ${x("amount")}::text)), '[]'::json)
        from ${tokenTransfers} where ${x("blockNumber")} = ${t("blockNumber")}
          and ${x("transactionIndex")} = ${t("transactionIndex")} and ${x("txHash")} = ${t("hash")}))::text`,
  };
}

const qualified = (table: string, column: string) => sql`${sql.identifier(table)}.${sql.identifier(column)}`;

/** A row of a `summaryFields()` select -> the summary. */
export function toSummary(row: { summary: string }): TransactionSummary {
  const [
    hash,
    blockNumber,
    blockHash,
    transactionIndex,
    blockTimeMs,
    fromAddress,
    toAddress,
    contractAddress,
    valueWei,
    gasUsed,
    gasPrice,
    status,
    protocol,
    actionType,
    functionName,
    functionArgs,
    source,
    events,
    transfers,
  ] = JSON.parse(row.summary) as SummaryTuple;
  return {
    tx: {
      hash,
      blockNumber,
      blockHash,
      transactionIndex,
      blockTimestamp: new Date(blockTimeMs),
      fromAddress,
      toAddress,
      contractAddress,
      valueWei: BigInt(valueWei),
      gasUsed: BigInt(gasUsed),
      gasPrice: BigInt(gasPrice),
      status,
      protocol,
      actionType,
      functionName,
      functionArgs,
      source,
    },
    logs: events.map(([logIndex, address, eventName, eventArgs]) => ({
      logIndex,
      address,
      eventName,
      eventArgs,
    })),
    transfers: transfers.map(([logIndex, tokenAddress, fromAddress, toAddress, amount]) => ({
      logIndex,
      tokenAddress,
      fromAddress,
      toAddress,
      amount: BigInt(amount),
    })),
  };
}

/**
 * The by-hash query, built once per database and prepared: Drizzle builds its SQL once instead of per request,
 * and node-postgres names it, so each pooled connection parses and plans it once. It is the one read the API
 * cannot serve from a cache when hashes are cold (every request a new hash); the API asks it for the hashes
 * of concurrent requests together (`createBatchLoader`).
 */
const byHashQueries = new WeakMap<Db, ReturnType<typeof prepareByHash>>();

function prepareByHash(db: Db) {
  return db
    .select(summaryFields())
    .from(transactions)
    .where(sql`${transactions.hash} = any(${sql.placeholder("hashes")}::text[])`)
    .prepare("protoscan_txs_by_hash");
}

/**
 * Stored transactions by hash (any case) as the API shows them, in one statement whatever their number; a hash
 * not stored has no summary. In no particular order.
 */
export async function getTransactionSummaries(
  db: Db,
  hashes: readonly string[],
): Promise<TransactionSummary[]> {
  let query = byHashQueries.get(db);
  if (!query) {
    query = prepareByHash(db);
    byHashQueries.set(db, query);
  }
  const rows = await query.execute({ hashes: hashes.map((hash) => hash.toLowerCase()) });
  return rows.map(toSummary);
}
