import { and, eq, gt, gte, inArray, lt, lte, or, sql } from "drizzle-orm";
import type { Address } from "../config/schema.ts";
import type { IndexedTransaction } from "../decode/decodeTransaction.ts";
import { groupBy } from "../internal/groupBy.ts";
import { canCopyRows, copyEncoded, type EncodedCopy, encodeCopy } from "./copyRows.ts";
import type { Db } from "./createDatabase.ts";
import {
  encodeAddressTransactions,
  encodeLogs,
  encodeTransaction,
  encodeTransfers,
  type IngestSource,
  ZERO_ADDRESS,
} from "./encode.ts";
import { equalsAny } from "./equalsAny.ts";
import { BlockHashConflictError, isUniqueViolation, StoredBlocksUnverifiedError } from "./errors.ts";
import { storedHashes } from "./indexerState.ts";
import { insertRows } from "./insertRows.ts";
import { writeOutbox } from "./outbox.ts";
import { retryConflicts } from "./retryConflicts.ts";
import {
  addressTransactions,
  blocks,
  indexerCursor,
  logs,
  tokenBalances,
  tokenTransfers,
  transactions,
} from "./schema.ts";
import { sendTogether } from "./sendTogether.ts";

export type BlockRow = typeof blocks.$inferInsert;

/** A balance read from the chain (`balanceOf` at `blockNumber`), for tokens kept in `call` mode. */
export type BalanceReading = { token: Address; holder: Address; balance: bigint; blockNumber: number };

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
 * The rows of a commit's transactions in COPY's text format (PGlite), one per table, and the transfer rows
 * among them (their balance deltas), made by `encodeCommitRows` from the same transactions the commit is
 * given.
 */
export type EncodedRows = {
  readonly copies: readonly (EncodedCopy | null)[];
  readonly transfers: readonly EncodedTransfer[];
};

/**
 * Encode the rows of `transactions` for the commit that will store them, or undefined where commits do not
 * copy (PostgreSQL). The polling indexer encodes a group while the previous one is stored, so that the
 * commit's statements go out at once (docs/performance.md, "Indexer backfill").
 */
export function encodeCommitRows(
  db: Db,
  transactions: readonly IndexedTransaction[],
  source: IngestSource,
): EncodedRows | undefined {
  return canCopyRows(db) ? encodeRows(uniqueInOrder(transactions), source) : undefined;
}

function encodeRows(sorted: readonly IndexedTransaction[], source: IngestSource): EncodedRows {
  const transfers = sorted.flatMap(encodeTransfers);
  return {
    copies: [
      encodeCopy(
        transactions,
        sorted.map((t) => encodeTransaction(t, source)),
      ),
      encodeCopy(logs, sorted.flatMap(encodeLogs)),
      encodeCopy(tokenTransfers, transfers),
      encodeCopy(addressTransactions, sorted.flatMap(encodeAddressTransactions)),
    ],
    transfers,
  };
}

/** Each hash once (the last given wins), in block order. */
function uniqueInOrder(given: readonly IndexedTransaction[]): IndexedTransaction[] {
  return [...new Map(given.map((t) => [t.hash.toLowerCase(), t])).values()].sort(
    (a, b) => a.blockNumber - b.blockNumber || a.transactionIndex - b.transactionIndex,
  );
}

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

/** The balance deltas of `transfers` for the tokens kept by delta arithmetic, one per (token, holder). */
function balanceDeltas(
  transfers: readonly EncodedTransfer[],
  deltaTokens: ReadonlySet<string>,
): { token: string; holder: string; delta: bigint; blockNumber: number }[] {
  const deltas = new Map<string, { token: string; holder: string; delta: bigint; blockNumber: number }>();
  for (const t of transfers) {
    if (!deltaTokens.has(t.tokenAddress)) continue;
    addDelta(deltas, t.tokenAddress, t.fromAddress, -t.amount, t.blockNumber);
    addDelta(deltas, t.tokenAddress, t.toAddress, t.amount, t.blockNumber);
  }
  return [...deltas.values()];
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
type EncodedTransfer = ReturnType<typeof encodeTransfers>[number];

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

type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/**
 * Transaction-level advisory lock taken first by every commit and rollback of ingested data ("ingest!!" in
 * ASCII; distinct from the writer, migration and outbox keys). On PostgreSQL, a rollback (removeBlocks) and a
 * track-tx or webhook commit from another connection could otherwise interleave statement by statement
 * under READ COMMITTED: the rollback would delete rows committed after it computed its balance deltas (the
 * fault simulation's seed 12 left a delta-mode balance off by one transfer). Holding this lock, the ingest
 * writes of all processes run one after another; it is released at commit or rollback. On PGlite (one
 * connection) it costs one statement.
 */
export const INGEST_LOCK_KEY = 0x696e676573742121n;

/**
 * Run `write` as one database transaction of ingested data: holding INGEST_LOCK_KEY, and run again when
 * PostgreSQL aborts it for a conflict with a concurrent writer (polling, rollbacks, track-tx floods and the
 * inbox worker can deadlock on rows outside the lock, such as balances). With `unlimited`, the connection's
 * statement timeout is lifted before the lock is waited for (a deferred index build may hold it for minutes).
 */
export function ingestTransaction<T>(
  db: Db,
  write: (tx: Tx) => Promise<T>,
  options: { unlimited?: boolean } = {},
): Promise<T> {
  return retryConflicts(() =>
    db.transaction(async (tx) => {
      if (options.unlimited) await tx.execute(sql`set local statement_timeout = 0`);
      // The write's first statements follow the lock's without waiting for its answer: they run once it is
      // held, and fail with it if it fails.
      const [, result] = await sendTogether(
        () => tx.execute(sql`select pg_advisory_xact_lock(${INGEST_LOCK_KEY.toString()}::bigint)`).execute(),
        () => write(tx),
      );
      return result;
    }),
  );
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

function addDelta(
  deltas: Map<string, { token: string; holder: string; delta: bigint; blockNumber: number }>,
  token: string,
  holder: string,
  delta: bigint,
  blockNumber: number,
) {
  if (holder === ZERO_ADDRESS || delta === 0n) return;
  const key = `${token}:${holder}`;
  const entry = deltas.get(key);
  if (entry) {
    entry.delta += delta;
    entry.blockNumber = Math.max(entry.blockNumber, blockNumber);
  } else deltas.set(key, { token, holder, delta, blockNumber });
}

/** Add signed deltas to cached balances (creating rows as needed). Used on ingest and, negated, on rollback. */
export async function applyDeltas(
  tx: Tx | Db,
  deltas: readonly { token: string; holder: string; delta: bigint; blockNumber: number }[],
): Promise<void> {
  await insertRows(
    tx,
    tokenBalances,
    deltas.map((d) => ({
      tokenAddress: d.token,
      holder: d.holder,
      balance: d.delta,
      blockNumber: d.blockNumber,
    })),
    {
      onConflict: sql`on conflict (token_address, holder) do update set
        balance = ${tokenBalances.balance} + excluded.balance,
        block_number = greatest(${tokenBalances.blockNumber}, excluded.block_number)`,
    },
  );
}

/**
 * Write `balanceOf` readings; an older reading never replaces a newer one, unless `replace` (after a
 * rollback, when the newer ones came from orphaned blocks).
 */
export async function upsertReadings(
  tx: Tx | Db,
  readings: readonly BalanceReading[],
  options: { replace?: boolean } = {},
): Promise<void> {
  await insertRows(
    tx,
    tokenBalances,
    readings.map((r) => ({
      tokenAddress: r.token.toLowerCase(),
      holder: r.holder.toLowerCase(),
      balance: r.balance,
      blockNumber: r.blockNumber,
    })),
    {
      onConflict: sql`on conflict (token_address, holder) do update set
        balance = excluded.balance, block_number = excluded.block_number${
          options.replace ? sql`` : sql` where ${tokenBalances.blockNumber} <= excluded.block_number`
        }`,
    },
  );
}

/** Stamp cached balances as checked at `blockNumber` without changing them (their `balanceOf` failed). */
export async function touchBalances(
  db: Db,
  pairs: readonly { token: string; holder: string }[],
  blockNumber: number,
): Promise<void> {
  for (const p of pairs) {
    await db
      .update(tokenBalances)
      .set({ blockNumber })
      .where(
        and(
          eq(tokenBalances.tokenAddress, p.token),
          eq(tokenBalances.holder, p.holder),
          lt(tokenBalances.blockNumber, blockNumber),
        ),
      );
  }
}

export type RemovedTransaction = {
  hash: string;
  blockNumber: number;
  blockHash: string;
  protocol: string;
  source: string;
  /** addresses that took part (for WebSocket address topics) */
  parties: string[];
  /** tracked tokens it transferred (for WebSocket token topics) */
  tokens: string[];
};

export type RollbackResult = {
  removed: RemovedTransaction[];
  /** (token, holder) pairs of `call`-mode tokens whose balances must be read again */
  staleBalances: { token: string; holder: string }[];
};

/**
 * Delete everything stored from orphaned blocks (SPEC §3.4): either every block after `after`, or the given
 * block numbers. Balances of delta-mode tokens are restored exactly by negating the removed transfers;
 * call-mode pairs are returned so the caller reads them again from the canonical chain. With `outbox`, the
 * removals are announced in the fan-out outbox in the same transaction (PostgreSQL).
 */
export async function removeBlocks(
  db: Db,
  target: { after: number } | { numbers: readonly number[] },
  deltaTokens: ReadonlySet<string>,
  cursorName?: string,
  options: { outbox?: boolean } = {},
): Promise<RollbackResult> {
  const where = <T extends { blockNumber: unknown }>(col: T["blockNumber"]) =>
    "after" in target
      ? gt(col as typeof transactions.blockNumber, target.after)
      : inArray(col as typeof transactions.blockNumber, [...target.numbers]);
  if ("numbers" in target && target.numbers.length === 0) return { removed: [], staleBalances: [] };

  return ingestTransaction(db, async (tx) => {
    const txRows = await tx
      .select({
        hash: transactions.hash,
        blockNumber: transactions.blockNumber,
        blockHash: transactions.blockHash,
        protocol: transactions.protocol,
        source: transactions.source,
      })
      .from(transactions)
      .where(where(transactions.blockNumber))
      .orderBy(transactions.blockNumber, transactions.transactionIndex);
    const transferRows = await tx.select().from(tokenTransfers).where(where(tokenTransfers.blockNumber));
    const partyRows = await tx
      .select({ address: addressTransactions.address, txHash: addressTransactions.txHash })
      .from(addressTransactions)
      .where(where(addressTransactions.blockNumber));

    const deltas = new Map<string, { token: string; holder: string; delta: bigint; blockNumber: number }>();
    const stale = new Map<string, { token: string; holder: string }>();
    for (const t of transferRows) {
      if (deltaTokens.has(t.tokenAddress)) {
        addDelta(deltas, t.tokenAddress, t.fromAddress, t.amount, 0);
        addDelta(deltas, t.tokenAddress, t.toAddress, -t.amount, 0);
      } else {
        for (const holder of [t.fromAddress, t.toAddress]) {
          if (holder !== ZERO_ADDRESS)
            stale.set(`${t.tokenAddress}:${holder}`, { token: t.tokenAddress, holder });
        }
      }
    }

    await tx.delete(logs).where(where(logs.blockNumber));
    await tx.delete(tokenTransfers).where(where(tokenTransfers.blockNumber));
    await tx.delete(addressTransactions).where(where(addressTransactions.blockNumber));
    await tx.delete(transactions).where(where(transactions.blockNumber));
    await tx.delete(blocks).where(where(blocks.number));
    await applyDeltas(tx, [...deltas.values()]);
    if ("after" in target && cursorName) {
      await tx
        .update(indexerCursor)
        .set({ blockNumber: target.after, updatedAt: new Date() })
        .where(and(sql`${indexerCursor.name} = ${cursorName}`, gt(indexerCursor.blockNumber, target.after)));
    }

    const parties = groupBy(partyRows, (r) => r.txHash);
    const tokensOf = groupBy(transferRows, (r) => r.txHash);
    const removed = txRows.map((r) => ({
      ...r,
      parties: (parties.get(r.hash) ?? []).map((p) => p.address),
      tokens: [...new Set((tokensOf.get(r.hash) ?? []).map((t) => t.tokenAddress))],
    }));
    if (options.outbox) {
      await writeOutbox(
        tx,
        removed.map((r) => ({
          kind: "removed",
          txHash: r.hash,
          blockNumber: r.blockNumber,
          blockHash: r.blockHash,
          detail: { protocol: r.protocol, parties: r.parties, tokens: r.tokens },
        })),
      );
    }
    return { removed, staleBalances: [...stale.values()] };
  });
}
