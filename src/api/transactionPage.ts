import type { TokenConfig } from "../config/schema.ts";
import type { TransactionValuer } from "../prices/transactionValues.ts";
import type { TransactionPosition } from "../store/protocolReads.ts";
import type { TransactionSummary } from "../store/transactionSummaries.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { ApiError } from "./errorRegistry.ts";
import type { TransactionJson } from "./schemas/transaction.ts";
import { toTransactionsJson } from "./toTransactionJson.ts";

/** `limit`, `offset` and `cursor` of a transaction list, as validated by its querystring schema. */
export type TransactionPageQuery = {
  limit: number;
  offset?: number | undefined;
  cursor?: string | undefined;
};

/** What the store reads for a page: one row more than asked, to tell whether a next page exists. */
export type TransactionPageArgs = { limit: number; offset: number; before?: TransactionPosition };

/**
 * Offset or keyset paging of a newest-first transaction list (SPEC §4): `cursor` continues strictly after
 * the last item of the page that returned it, `offset` skips rows; both together are a 400 naming `cursor`,
 * as is a cursor this API did not issue.
 */
export function transactionPageArgs(query: TransactionPageQuery): TransactionPageArgs {
  if (query.cursor !== undefined && query.offset !== undefined) {
    throw new ApiError("INVALID_PARAMETER", "cursor: cannot be combined with offset; use one or the other");
  }
  if (query.cursor === undefined) return { limit: query.limit + 1, offset: query.offset ?? 0 };
  const position = decodeCursor(query.cursor);
  return {
    limit: query.limit + 1,
    offset: 0,
    before: { blockNumber: position.blockNumber, transactionIndex: position.index },
  };
}

/**
 * The page as served: at most `limit` transactions valued at block time, and the cursor of the next page
 * (null on the last).
 */
export async function transactionPage(
  rows: readonly TransactionSummary[],
  limit: number,
  tokens: ReadonlyMap<string, TokenConfig>,
  value: TransactionValuer,
): Promise<{ transactions: TransactionJson[]; nextCursor: string | null }> {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    transactions: await toTransactionsJson(page, tokens, value),
    nextCursor:
      rows.length > limit && last
        ? encodeCursor({ blockNumber: last.tx.blockNumber, index: last.tx.transactionIndex })
        : null,
  };
}
