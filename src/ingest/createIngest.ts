import type { Hash } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import { type AbiRegistry, createAbiRegistry } from "../decode/abiRegistry.ts";
import {
  type ChainTransaction,
  decodeTransaction,
  type IndexedTransaction,
} from "../decode/decodeTransaction.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import { type BalanceReading, touchBalances, upsertReadings } from "../store/balanceWrites.ts";
import { type CommitSpan, commitBatch } from "../store/commitBatch.ts";
import type { Db } from "../store/createDatabase.ts";
import type { IngestSource } from "../store/encode.ts";
import { ZERO_ADDRESS } from "../store/encode.ts";
import { type EncodedRows, encodeCommitRows } from "../store/encodeCommitRows.ts";
import { BlockHashConflictError } from "../store/errors.ts";
import { getHoldersReadAfter, getStaleHolders, storedHashes } from "../store/indexerState.ts";
import { type RemovedTransaction, removeBlocks } from "../store/removeBlocks.ts";
import type { Broadcaster } from "./broadcaster.ts";
import { ReorgDetectedError } from "./errors.ts";
import type { BlockHeader } from "./fetchBlockTransactions.ts";
import { fetchTransactionsByHash } from "./fetchTransactionsByHash.ts";
import { readBalances } from "./readBalances.ts";
import { resolveTokenModes } from "./tokenModes.ts";

/** At most this many stale call-mode balances are read again per commit; the rest wait for the next one. */
const MAX_REFRESH = 100_000;

/** `prepare` yields to the event loop after decoding this many transactions. */
const DECODE_SLICE = 50;

export type CommitArgs = {
  source: IngestSource;
  transactions: readonly ChainTransaction[];
  headers: readonly BlockHeader[];
  balanceBlock: number;
  cursor?: { name: string; blockNumber: number; filterHash: string };
  hint?: string;
  /**
   * Also read again every cached call-mode balance older than `balanceBlock` (default: when `cursor` is
   * given). The polling indexer asks for it on the last group of a range only: the range is its unit of
   * freshness, and re-reading every holder after each group would cost a multicall per group per few hundred
   * holders during a backfill.
   */
  refreshStale?: boolean;
};

/** A commit decoded and with its touched call-mode balances read, ready to store (`Ingest.prepare`). */
export type PreparedCommit = {
  /** what was asked, less the fetched transactions: `store` needs the decoded ones only */
  args: Omit<CommitArgs, "transactions">;
  decoded: IndexedTransaction[];
  balances: BalanceReading[];
  /** the decoded transactions' rows, encoded for the commit (PGlite; store/encodeCommitRows.ts) */
  encoded: EncodedRows | undefined;
};

export type HashOutcome =
  | { status: "indexed"; hash: Hash; inserted: boolean }
  | { status: "pending"; hash: Hash }
  | { status: "not_relevant"; hash: Hash };

/**
 * The one pipeline every trigger uses (SPEC §3): fetch -> decode -> store -> balances -> broadcast.
 * The polling indexer hands it whole fetched ranges; webhooks and track-tx hand it hashes.
 */
export type Ingest = {
  registry: AbiRegistry;
  /** token addresses whose balances are kept by delta arithmetic */
  deltaTokens: ReadonlySet<string>;
  /**
   * Decode and store fetched transactions with their block headers, read call-mode balances at
   * `balanceBlock`, advance `cursor` in the same database transaction, then broadcast what was new.
   */
  commit(args: CommitArgs): Promise<IndexedTransaction[]>;
  /**
   * `commit` in two steps, so a caller can overlap them: `prepare` decodes and reads the touched call-mode
   * balances (CPU and the node, no database write); `store` writes the prepared commit. The polling indexer
   * prepares the next group of blocks while the database stores the current one (indexer/indexRange.ts).
   */
  prepare(args: CommitArgs): Promise<PreparedCommit>;
  /**
   * Throws `ReorgDetectedError` when a block it brings is stored under another hash, and with a `span`,
   * `StoredBlocksUnverifiedError` for the blocks stored in it that it cannot vouch for (nothing is stored).
   */
  store(prepared: PreparedCommit, options?: { span?: CommitSpan }): Promise<IndexedTransaction[]>;
  /** Fetch, decode and store transactions known by hash (webhooks, track-tx). */
  ingestHashes(hashes: readonly Hash[], source: IngestSource, hint?: string): Promise<HashOutcome[]>;
  /**
   * Delete what was stored from orphaned blocks, restore balances, broadcast `removed`, and give
   * transactions that webhooks or track-tx stored a chance to be found again on the canonical chain.
   */
  rollback(
    target: { after: number } | { numbers: readonly number[] },
    cursorName?: string,
  ): Promise<RemovedTransaction[]>;
  /**
   * Read again, at `blockNumber`, every cached balance of the tokens kept in `call` mode that is older than
   * it: such tokens are not scanned in full, so their holders' balances also move in transactions protoscan
   * never stores. The polling indexer calls this when a cycle has caught up. Returns how many were read.
   */
  refreshBalances(blockNumber: number): Promise<number>;
};

export async function createIngest(
  common: Common,
  deps: {
    chain: ChainClient;
    db: Db;
    broadcaster: Broadcaster;
    /**
     * On PostgreSQL: also announce every stored and removed transaction in the fan-out outbox, in the commit's
     * own database transaction, for the WebSocket hubs of every process (realtime/createPgFanout.ts).
     */
    outbox?: boolean;
  },
): Promise<Ingest> {
  const { chain, db, broadcaster } = deps;
  const outbox = deps.outbox === true;
  const registry = createAbiRegistry(common.config);
  const deltaTokens = await resolveTokenModes(common.config, chain, db);

  const decodeSafely = (tx: ChainTransaction, hint?: string): IndexedTransaction | null => {
    try {
      return decodeTransaction(registry, tx, hint);
    } catch (error) {
      // Decoding must never stop ingestion: keep what the chain says, with the selector as the name.
      common.logger.warn(
        { tx: tx.hash, err: errorMessage(error) },
        "transaction failed to decode; stored undecoded",
      );
      const minimal = decodeTransaction(registry, { ...tx, input: "0x" }, hint);
      return (
        minimal && {
          ...minimal,
          functionName: tx.input.slice(0, 10),
          actionType: "unknown",
          functionArgs: {},
        }
      );
    }
  };

  const callTokens = common.config.tokens.map((t) => t.address as string).filter((t) => !deltaTokens.has(t));

  const prepare: Ingest["prepare"] = async (args) => {
    // Decoding a group of 1,000 transactions takes tens of milliseconds of the event loop, which meanwhile
    // also carries the previous group's commit statement by statement: yielding every DECODE_SLICE
    // transactions lets each database answer be taken and the next statement sent without waiting for the
    // whole decode (on PGlite, about 0.2 s less delay in the 10,000-transaction benchmark).
    const decoded: IndexedTransaction[] = [];
    for (let i = 0; i < args.transactions.length; i++) {
      if (i > 0 && i % DECODE_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      const tx = decodeSafely(args.transactions[i]!, args.hint);
      if (tx !== null) decoded.push(tx);
    }
    const callPairs: { token: string; holder: string }[] = [];
    for (const tx of decoded) {
      for (const t of tx.transfers) {
        if (deltaTokens.has(t.token)) continue;
        if (t.from !== ZERO_ADDRESS) callPairs.push({ token: t.token, holder: t.from });
        if (t.to !== ZERO_ADDRESS) callPairs.push({ token: t.token, holder: t.to });
      }
    }
    const reading = readBalances(chain, callPairs, args.balanceBlock, common.logger);
    reading.catch(() => undefined); // awaited below, unless encoding throws first
    // Encoded while the balances are read: the commit then sends its rows as they are.
    const encoded = encodeCommitRows(db, decoded, args.source);
    const balances = await reading;
    // A prepared group waiting for its turn does not also hold the fetched transactions (their inputs and
    // log objects).
    const { transactions: _fetched, ...rest } = args;
    return { args: rest, decoded, balances, encoded };
  };

  const store: Ingest["store"] = async ({ args, decoded, balances, encoded }, options = {}) => {
    // A polling commit moves the cursor: every cached holder of a token not scanned in full is read again at
    // the new indexed block, since its balance also moves in transactions protoscan never stores.
    let readings = balances;
    if (args.refreshStale ?? args.cursor !== undefined) {
      const read = new Set(balances.map((b) => `${b.token}:${b.holder}`));
      const stale = (await getStaleHolders(db, callTokens, args.balanceBlock, MAX_REFRESH)).filter(
        (p) => !read.has(`${p.token}:${p.holder}`),
      );
      if (stale.length > 0) {
        readings = [...balances, ...(await readBalances(chain, stale, args.balanceBlock, common.logger))];
      }
    }
    // A block stored under another hash: a reorg the indexer has yet to roll back, or this fetch is already
    // stale. Callers (polling, webhooks, track-tx) retry a ReorgDetectedError.
    const { inserted } = await commitBatch(db, {
      source: args.source,
      transactions: decoded,
      blocks: args.headers.map((h) => ({
        number: h.number,
        hash: h.hash,
        parentHash: h.parentHash,
        timestamp: h.timestamp,
      })),
      deltaTokens,
      balances: readings,
      ...(args.cursor ? { cursor: args.cursor } : {}),
      outbox,
      encoded,
      span: options.span,
    }).catch((error: unknown) => {
      if (error instanceof BlockHashConflictError)
        throw new ReorgDetectedError(error.blockNumber, error.message);
      throw error;
    });
    if (inserted.length > 0) {
      common.metrics.ingestTransactions.inc({ source: args.source }, inserted.length);
      broadcaster.publish(
        inserted.map((transaction) => ({ type: "transaction", transaction, source: args.source })),
      );
    }
    return inserted;
  };

  const commit: Ingest["commit"] = async (args) => store(await prepare(args));

  const ingestHashes: Ingest["ingestHashes"] = async (hashes, source, hint) => {
    const unique = [...new Set(hashes.map((h) => h.toLowerCase() as Hash))];
    const already = await storedHashes(db, unique);
    const toFetch = unique.filter((h) => !already.has(h));
    const outcomes = new Map<Hash, HashOutcome>();
    for (const hash of already)
      outcomes.set(hash as Hash, { status: "indexed", hash: hash as Hash, inserted: false });
    if (toFetch.length > 0) {
      const fetched = await fetchTransactionsByHash(chain, toFetch);
      for (const hash of fetched.pending) outcomes.set(hash, { status: "pending", hash });
      const latest = Math.max(0, ...fetched.headers.map((h) => h.number));
      const relevant = fetched.transactions.filter((tx) => decodeSafely(tx, hint) !== null);
      const inserted = await commit({
        source,
        transactions: relevant,
        headers: fetched.headers.filter((h) => relevant.some((tx) => tx.blockNumber === h.number)),
        balanceBlock: latest,
        ...(hint ? { hint } : {}),
      });
      const insertedHashes = new Set(inserted.map((t) => t.hash.toLowerCase()));
      for (const tx of fetched.transactions) {
        const hash = tx.hash.toLowerCase() as Hash;
        outcomes.set(
          hash,
          relevant.includes(tx)
            ? { status: "indexed", hash, inserted: insertedHashes.has(hash) }
            : { status: "not_relevant", hash },
        );
      }
    }
    return unique.map((hash) => outcomes.get(hash) ?? { status: "pending", hash });
  };

  const rollback: Ingest["rollback"] = async (target, cursorName) => {
    const { removed, staleBalances } = await removeBlocks(db, target, deltaTokens, cursorName, { outbox });
    // Call-mode balances read on the orphaned chain (after the ancestor) are read again too, even for holders
    // with no removed transfer: otherwise a reading stamped with an orphaned block number would look fresh.
    const orphanedReadings = "after" in target ? await getHoldersReadAfter(db, callTokens, target.after) : [];
    const toRead = [...staleBalances, ...orphanedReadings];
    if (toRead.length > 0) {
      // Read at the common ancestor (or the head for single orphaned blocks); the re-indexed blocks update
      // them again. These readings replace the orphaned ones even though those carry higher block numbers.
      const at =
        "after" in target ? target.after : Number(await chain.client.getBlockNumber({ cacheTime: 0 }));
      await upsertReadings(db, await readBalances(chain, toRead, at, common.logger), { replace: true });
    }
    if (removed.length > 0) {
      common.logger.warn(
        { removed: removed.length, target },
        "reorg: removed transactions of orphaned blocks",
      );
      broadcaster.publish(removed.map((r) => ({ type: "removed", removed: r })));
      // Transactions only webhooks or track-tx can see may have been mined again in another block.
      for (const source of ["webhook", "track"] as const) {
        const hashes = removed.filter((r) => r.source === source).map((r) => r.hash as Hash);
        if (hashes.length === 0) continue;
        await ingestHashes(hashes, source).catch((error: unknown) => {
          common.logger.warn(
            { err: errorMessage(error), source },
            "could not re-check orphaned transactions",
          );
        });
      }
    }
    return removed;
  };

  const refreshBalances: Ingest["refreshBalances"] = async (blockNumber) => {
    let read = 0;
    for (;;) {
      const stale = await getStaleHolders(db, callTokens, blockNumber, 2_000);
      if (stale.length === 0) return read;
      const readings = await readBalances(chain, stale, blockNumber, common.logger);
      // A holder whose call failed is stamped with this block anyway, so the loop moves on.
      const failed = stale.filter((p) => !readings.some((r) => r.token === p.token && r.holder === p.holder));
      await upsertReadings(db, readings);
      if (failed.length > 0) await touchBalances(db, failed, blockNumber);
      read += readings.length;
    }
  };

  return { registry, deltaTokens, commit, prepare, store, ingestHashes, rollback, refreshBalances };
}
