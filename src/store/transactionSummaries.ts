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

/** A decoded log as the API shows it (`decodedData.events[]`). */
export type EventSummary = Pick<LogRow, "logIndex" | "address" | "eventName" | "eventArgs">;
/** A tracked-token transfer as the API shows it (`tokenTransfers[]`). */
export type TransferSummary = Pick<
  TransferRow,
  "logIndex" | "tokenAddress" | "fromAddress" | "toAddress" | "amount"
>;
/** A stored transaction with what the API shows of its receipt. `logs`: decoded ones only, any order. */
export type TransactionSummary = { tx: TransactionRow; logs: EventSummary[]; transfers: TransferSummary[] };

type EventTuple = [number, string, string, Record<string, unknown> | null];
type TransferTuple = [number, string, string, string, string];

/**
 * The select list of a summary query over `transactions`: the row, and its events and transfers as JSON
 * arrays of positional tuples (amounts as text: a JSON number would lose uint256 precision).
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
    tx: transactions,
    events: sql<
      EventTuple[]
    >`(select coalesce(json_agg(json_build_array(${l("logIndex")}, ${l("address")}, ${l("eventName")}, ${l("eventArgs")})), '[]'::json)
      from ${logs} where ${l("blockNumber")} = ${t("blockNumber")} and ${l("transactionIndex")} = ${t("transactionIndex")}
        and ${l("txHash")} = ${t("hash")} and ${l("eventName")} is not null)`,
    transfers: sql<
      TransferTuple[]
    >`(select coalesce(json_agg(json_build_array(${x("logIndex")}, ${x("tokenAddress")}, ${x("fromAddress")}, ${x("toAddress")}, ${x("amount")}::text)), '[]'::json)
      from ${tokenTransfers} where ${x("blockNumber")} = ${t("blockNumber")}
        and ${x("transactionIndex")} = ${t("transactionIndex")} and ${x("txHash")} = ${t("hash")})`,
  };
}

const qualified = (table: string, column: string) => sql`${sql.identifier(table)}.${sql.identifier(column)}`;

/** A row of a `summaryFields()` select -> the summary. */
export function toSummary(row: {
  tx: TransactionRow;
  events: EventTuple[] | string;
  transfers: TransferTuple[] | string;
}): TransactionSummary {
  return {
    tx: row.tx,
    logs: json<EventTuple[]>(row.events).map(([logIndex, address, eventName, eventArgs]) => ({
      logIndex,
      address,
      eventName,
      eventArgs,
    })),
    transfers: json<TransferTuple[]>(row.transfers).map(
      ([logIndex, tokenAddress, fromAddress, toAddress, amount]) => ({
        logIndex,
        tokenAddress,
        fromAddress,
        toAddress,
        amount: BigInt(amount),
      }),
    ),
  };
}

/** Drivers parse `json` columns; a driver configured not to hands over the text. */
function json<T>(value: T | string): T {
  return typeof value === "string" ? (JSON.parse(value) as T) : value;
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
