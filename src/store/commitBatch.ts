import { and, gte, lte, or, sql } from "drizzle-orm";
import type { IndexedTransaction } from "../decode/decodeTransaction.ts";
import { applyDeltas, type BalanceReading, balanceDeltas, upsertReadings } from "./balanceWrites.ts";
import { canCopyRows, copyEncoded } from "./copyRows.ts";
import type { Db } from "./createDatabase.ts";
import {
  encodeAddressTransactions,
  encodeLogs,
  encodeTransaction,
  encodeTransfers,
  type IngestSource,
} from "./encode.ts";
import { type EncodedRows, type EncodedTransfer, encodeRows, uniqueInOrder } from "./encodeCommitRows.ts";
import { equalsAny } from "./equalsAny.ts";
import { BlockHashConflictError, isUniqueViolation, StoredBlocksUnverifiedError } from "./errors.ts";
import { storedHashes } from "./indexerState.ts";
import { ingestTransaction, type Tx } from "./ingestTransaction.ts";
import { insertRows } from "./insertRows.ts";
import { writeOutbox } from "./outbox.ts";
import { addressTransactions, blocks, indexerCursor, logs, tokenTransfers, transactions } from "./schema.ts";
import { sendTogether } from "./sendTogether.ts";

export type BlockRow = typeof blocks.$inferInsert;

/**
 * The blocks a polling commit covers, `[from, to]`: every block stored there must be one the commit brings,
 * under the same hash, or one of `verified` (blocks read from the chain since the last attempt), or the commit
 * fails with `StoredBlocksUnverifiedError`. The check runs under the ingest lock, in the commit's own pipeline.
 */
export type CommitSpan = { from: number; to: number; verified?: ReadonlyMap<number, string> };

export type CommitInput = {
  source: IngestSource;
  /** decoded transactions, any order; already-stored hashes are skipped silently */
  transactions: readonly IndexedTransaction[];
  /** headers of the blocks the transactions come from, and of the range end (for reorg checks) */
  blocks: readonly BlockRow[];
  /** tokens whose balances are kept by exact delta arithmetic over their transfers */
  deltaTokens: ReadonlySet<string>;
  /** balances read with `balanceOf` for `call`-mode tokens; a reading never replaces a newer one */
  balances?: readonly BalanceReading[];
  /** the polling cursor to advance in the same database transaction */
  cursor?: { name: string; blockNumber: number; filterHash: string };
  /** announce the stored transactions in the fan-out outbox, in the same transaction (PostgreSQL) */
  outbox?: boolean;
  /** the rows of `transactions`, encoded ahead by `encodeCommitRows` (encoded in the commit when absent) */
  encoded?: EncodedRows | undefined;
  /** polling: the blocks the commit covers (CommitSpan); without it only its own headers are checked */
  span?: CommitSpan | undefined;
};

export type CommitResult = {
  /** the transactions this commit stored (not stored before), in block order */
  inserted: IndexedTransaction[];
};

/**
 * Store one committed batch atomically (SPEC §2): transactions, their logs, transfers and address index,
 * block headers, balance changes and the cursor, in one database transaction. Idempotent: a transaction
 * already stored is skipped with its logs and transfers, so its balance deltas are never applied twice.
 *
 * On PGlite every statement of the commit goes out at once (`copyCommit`), optimistically: the rows are
 * copied as new. A transaction stored already fails the copy (nothing is applied), and the commit runs again
 * the INSERT way (`insertCommit`), which skips what is stored, as on PostgreSQL.
 *
 * @throws {BlockHashConflictError} a header the commit brings is stored under another hash (no span)
 * @throws {StoredBlocksUnverifiedError} the span holds blocks the commit cannot vouch for (CommitSpan)
 */
export async function commitBatch(db: Db, input: CommitInput): Promise<CommitResult> {
  const sorted = uniqueInOrder(input.transactions);
  if (!canCopyRows(db)) return insertCommit(db, input, sorted);
  try {
    return await copyCommit(db, input, sorted);
  } catch (error) {
    // A row of a new transaction that is stored already: nothing of this attempt was applied.
    if (!isUniqueViolation(error)) throw error;
    return insertCommit(db, input, sorted);
  }
}

/**
 * PGlite: the whole commit in one pipeline (sendTogether), so the worker runs it back to back and the event
 * loop answers once, instead of once per step while it prepares the next group: the headers, the stored
 * blocks to check, the four COPYs, balances and the cursor. The stored blocks are checked before COMMIT.
 */
function copyCommit(
  db: Db,
  input: CommitInput,
  sorted: readonly IndexedTransaction[],
): Promise<CommitResult> {
  const { copies, transfers } = input.encoded ?? encodeRows(sorted, input.source);
  return ingestTransaction(db, async (tx) => {
    const headers = uniqueHeaders(input.blocks);
    const [, stored] = await sendTogether(
      () => insertRows(tx, blocks, headers, DO_NOTHING),
      () => storedBlocks(tx, headers, input.span),
      ...copies.map((copy) => () => copyEncoded(tx, copy)),
      () => applyDeltas(tx, balanceDeltas(transfers, input.deltaTokens)),
      () => upsertReadings(tx, input.balances ?? []),
      () => input.cursor && upsertCursor(tx, input.cursor),
      // Last: it sends three statements, one after the other.
      () => input.outbox && announce(tx, sorted),
    );
    checkStoredBlocks(headers, stored, input.span);
    return { inserted: [...sorted] };
  });
}

/**
 * PostgreSQL, and PGlite when a copy met a stored row: INSERT … ON CONFLICT DO NOTHING, one statement per
 * table for the whole batch (see insertRows: Drizzle's per-value VALUES cost more CPU than the database's own
 * work on a backfill). What is stored already is skipped, row by row, and the statements return what they
 * stored; only those transfer rows move balances. Three pipelines: headers, stored blocks and stored hashes;
 * the rows; balances and the cursor.
 */
function insertCommit(
  db: Db,
  input: CommitInput,
  sorted: readonly IndexedTransaction[],
): Promise<CommitResult> {
  return ingestTransaction(db, async (tx) => {
    const headers = uniqueHeaders(input.blocks);
    const [, stored, already] = await sendTogether(
      () => insertRows(tx, blocks, headers, DO_NOTHING),
      () => storedBlocks(tx, headers, input.span),
      () =>
        storedHashes(
          tx,
          sorted.map((t) => t.hash),
        ),
    );
    checkStoredBlocks(headers, stored, input.span);
    const candidates = sorted.filter((t) => !already.has(t.hash.toLowerCase()));
    const { inserted, transfers } = await insertNewRows(tx, candidates, input.source);
    await sendTogether(
      () => applyDeltas(tx, balanceDeltas(transfers, input.deltaTokens)),
      () => upsertReadings(tx, input.balances ?? []),
      () => input.cursor && upsertCursor(tx, input.cursor),
      () => input.outbox && announce(tx, inserted),
    );
    return { inserted };
  });
}

const DO_NOTHING = { onConflict: sql`on conflict do nothing` };

/** Each header once, by number (the last given wins). */
function uniqueHeaders(given: readonly BlockRow[]): BlockRow[] {
  return [...new Map(given.map((b) => [b.number, b])).values()];
}

/**
 * The blocks stored at the commit's numbers, or in its span: read after its headers were inserted (DO
 * NOTHING), to be checked by `checkStoredBlocks`.
 */
function storedBlocks(
  tx: Tx,
  headers: readonly BlockRow[],
  span: CommitSpan | undefined,
): Promise<{ number: number; hash: string }[]> | [] {
  if (headers.length === 0 && !span) return [];
  const brought = equalsAny(
    blocks.number,
    headers.map((h) => h.number),
    "int8",
  );
  return tx
    .select({ number: blocks.number, hash: blocks.hash })
    .from(blocks)
    .where(span ? or(and(gte(blocks.number, span.from), lte(blocks.number, span.to)), brought) : brought)
    .execute();
}

/**
 * A stored header is never replaced, whoever commits: the transactions stored under the old hash would stay,
 * and no reorg check would find them again (a webhook or track-tx commit could once replace a header; the
 * fault simulation, seed 10). The check runs in the commit, under the lock: a webhook or track-tx commit is
 * refused (`BlockHashConflictError`), a polling one names every block of its span it cannot vouch for
 * (`StoredBlocksUnverifiedError`), which the indexer verifies against the chain (indexer/indexRange.ts).
 */
function checkStoredBlocks(
  headers: readonly BlockRow[],
  stored: readonly { number: number; hash: string }[],
  span: CommitSpan | undefined,
): void {
  const given = new Map(headers.map((h) => [h.number, h.hash]));
  const unverified = stored.filter(
    (row) => (given.get(row.number) ?? span?.verified?.get(row.number)) !== row.hash,
  );
  if (unverified.length === 0) return;
  if (span) throw new StoredBlocksUnverifiedError(unverified);
  const [first] = unverified;
  throw new BlockHashConflictError(first!.number, first!.hash, given.get(first!.number) ?? "");
}

function upsertCursor(tx: Tx, cursor: NonNullable<CommitInput["cursor"]>): Promise<unknown> {
  return tx
    .insert(indexerCursor)
    .values({ ...cursor, updatedAt: new Date() })
    .onConflictDoUpdate({
      target: indexerCursor.name,
      set: { blockNumber: cursor.blockNumber, filterHash: cursor.filterHash, updatedAt: new Date() },
    })
    .execute();
}

/** Announce stored transactions in the fan-out outbox (sends three statements, one after the other). */
function announce(tx: Tx, stored: readonly IndexedTransaction[]): Promise<void> {
  return writeOutbox(
    tx,
    stored.map((t) => ({
      kind: "transaction",
      txHash: t.hash,
      blockNumber: t.blockNumber,
      blockHash: t.blockHash,
    })),
  );
}

/** The transactions `insertNewRows` stored, and the transfer rows it stored of them. */
type StoredRows = { inserted: IndexedTransaction[]; transfers: EncodedTransfer[] };

/**
 * Insert the candidates' rows, skipping what is stored (ON CONFLICT DO NOTHING): the transactions first,
 * then the rows of those it inserted. Balance deltas come from the transfer rows the statement inserted: a
 * row skipped as already stored must never move a balance a second time (nor one of another transaction's,
 * were keys ever to clash).
 */
async function insertNewRows(
  tx: Tx,
  candidates: readonly IndexedTransaction[],
  source: IngestSource,
): Promise<StoredRows> {
  const rows = await insertRows(
    tx,
    transactions,
    candidates.map((t) => encodeTransaction(t, source)),
    { ...DO_NOTHING, returning: sql`returning ${sql.identifier(transactions.hash.name)}` },
  );
  const insertedHashes = new Set(rows.map((row) => String(row[transactions.hash.name])));
  const inserted = candidates.filter((t) => insertedHashes.has(t.hash.toLowerCase()));

  const encodedTransfers = inserted.flatMap(encodeTransfers);
  const [, insertedTransfers] = await sendTogether(
    () => insertRows(tx, logs, inserted.flatMap(encodeLogs), DO_NOTHING),
    () =>
      insertRows(tx, tokenTransfers, encodedTransfers, {
        ...DO_NOTHING,
        returning: sql`returning ${sql.identifier(tokenTransfers.txHash.name)}, ${sql.identifier(tokenTransfers.logIndex.name)}`,
      }),
    () => insertRows(tx, addressTransactions, inserted.flatMap(encodeAddressTransactions), DO_NOTHING),
  );
  const transfers =
    insertedTransfers.length === encodedTransfers.length
      ? encodedTransfers
      : keep(
          encodedTransfers,
          new Set(
            insertedTransfers.map(
              (r) => `${r[tokenTransfers.txHash.name]}:${r[tokenTransfers.logIndex.name]}`,
            ),
          ),
        );
  return { inserted, transfers };
}

/**
 * The encoded transfers whose `txHash:logIndex` is in `keys` (the rows a statement inserted), each key once:
 * of two rows with one key in one statement, ON CONFLICT DO NOTHING inserts the first.
 */
function keep<T extends { txHash: string; logIndex: number }>(
  rows: readonly T[],
  keys: ReadonlySet<string>,
): T[] {
  const left = new Set(keys);
  return rows.filter((r) => left.delete(`${r.txHash}:${r.logIndex}`));
}
