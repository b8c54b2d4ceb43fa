import type { Hash } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import { createAbiRegistry } from "../decode/abiRegistry.ts";
import {
  type ChainTransaction,
  decodeTransaction,
  type IndexedTransaction,
} from "../decode/decodeTransaction.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import { type BalanceReading, upsertReadings } from "../store/balanceWrites.ts";
import { type CommitSpan, commitBatch } from "../store/commitBatch.ts";
import type { Db } from "../store/createDatabase.ts";
import type { IngestSource } from "../store/encode.ts";
import { ZERO_ADDRESS } from "../store/encode.ts";
import { type EncodedRows, encodeCommitRows } from "../store/encodeCommitRows.ts";
import { getHoldersReadAfter, getStaleHolders, storedHashes } from "../store/indexerState.ts";
import { type RemovedTransaction, removeBlocks } from "../store/removeBlocks.ts";
import type { Broadcaster } from "./broadcaster.ts";
import { translateStoreError } from "./errors.ts";
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
  /**
   * A commit in two steps, so a caller can overlap them: `prepare` decodes and reads the touched call-mode
   * balances (CPU and the node, no database write); `store` writes the prepared commit: the transactions
   * with their block headers and balances, `cursor` advanced in the same database transaction, then
   * broadcasts what was new. The polling indexer prepares the next group of blocks while the database stores
   * the current one (indexer/indexRange.ts).
   */
  prepare(args: CommitArgs): Promise<PreparedCommit>;
  /**
   * Throws `ReorgDetectedError` when a block it brings is stored under another hash, and with a `span`,
   * `UnverifiedBlocksError` for the blocks stored in it that it cannot vouch for (nothing is stored): the
   * store's errors are translated in one place (`translateStoreError`, ingest/errors.ts).
   */
  store(prepared: PreparedCommit, options?: { span?: CommitSpan }): Promise<IndexedTransaction[]>;
  /** Fetch, decode and store transactions known by hash (webhooks, track-tx). */
  ingestHashes(hashes: readonly Hash[], source: IngestSource, hint?: string): Promise<HashOutcome[]>;
  /**
   * Delete what was stored from orphaned blocks, restore balances and broadcast `removed`. Webhook and
   * track-tx transactions among them are not looked up again here: the track watcher, which hears the
   * `removed` events, watches them until they are mined again (tracking/createTrackWatcher.ts).
   */
  rollback(
    target: { after: number } | { numbers: readonly number[] },
    cursorName?: string,
  ): Promise<RemovedTransaction[]>;
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

  /** `prepare` for transactions decoded already (`ingestHashes` decodes them to judge their relevance). */
  const prepareDecoded = async (
    args: Omit<CommitArgs, "transactions">,
    decoded: IndexedTransaction[],
  ): Promise<PreparedCommit> => {
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
    return { args, decoded, balances, encoded };
  };

  const prepare: Ingest["prepare"] = async ({ transactions, ...args }) => {
    // Decoding a group of 1,000 transactions takes tens of milliseconds of the event loop, which meanwhile
    // also carries the previous group's commit statement by statement: yielding every DECODE_SLICE
    // transactions lets each database answer be taken and the next statement sent without waiting for the
    // whole decode (on PGlite, about 0.2 s less delay in the 10,000-transaction benchmark).
    const decoded: IndexedTransaction[] = [];
    for (let i = 0; i < transactions.length; i++) {
      if (i > 0 && i % DECODE_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      const tx = decodeSafely(transactions[i]!, args.hint);
      if (tx !== null) decoded.push(tx);
    }
    // A prepared group waiting for its turn does not also hold the fetched transactions (their inputs and
    // log objects): only `args` without them is kept.
    return prepareDecoded(args, decoded);
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
    // stale. Callers (polling, webhooks, track-tx) retry a ReorgDetectedError. A polling span holding blocks
    // it cannot vouch for: UnverifiedBlocksError (indexer/indexRange.ts).
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
      throw translateStoreError(error);
    });
    if (inserted.length > 0) {
      common.metrics.ingestTransactions.inc({ source: args.source }, inserted.length);
      broadcaster.publish(
        inserted.map((transaction) => ({ type: "transaction", transaction, source: args.source })),
      );
    }
    return inserted;
  };

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
      // Decoded once: what judges a transaction relevant (it decodes to something) is what is stored.
      const relevant = new Map<ChainTransaction, IndexedTransaction>();
      for (const tx of fetched.transactions) {
        const decoded = decodeSafely(tx, hint);
        if (decoded !== null) relevant.set(tx, decoded);
      }
      const blocks = new Set([...relevant.keys()].map((tx) => tx.blockNumber));
      const prepared = await prepareDecoded(
        {
          source,
          headers: fetched.headers.filter((h) => blocks.has(h.number)),
          balanceBlock: latest,
          ...(hint ? { hint } : {}),
        },
        [...relevant.values()],
      );
      const inserted = await store(prepared);
      const insertedHashes = new Set(inserted.map((t) => t.hash.toLowerCase()));
      for (const tx of fetched.transactions) {
        const hash = tx.hash.toLowerCase() as Hash;
        outcomes.set(
          hash,
          relevant.has(tx)
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
      // Webhook and track-tx transactions among them may be mined again elsewhere: the track watcher owns
      // looking them up again (it hears these events and watches them until mined or expired, keeping each
      // one's source and hint), so they are not looked up here too (docs/reliability.md, promise 5).
      broadcaster.publish(removed.map((r) => ({ type: "removed", removed: r })));
    }
    return removed;
  };

  return { prepare, store, ingestHashes, rollback };
}
