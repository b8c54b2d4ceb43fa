import type { Block, Hash, Log } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { Ingest, PreparedCommit } from "../ingest/createIngest.ts";
import { ReorgDetectedError, UnverifiedBlocksError } from "../ingest/errors.ts";
import { type BlockHeader, fetchBlockTransactions, toHeader } from "../ingest/fetchBlockTransactions.ts";
import type { Db } from "../store/createDatabase.ts";
import { getStoredBlock } from "../store/indexerState.ts";
import { canonicalHashes } from "./canonicalHashes.ts";

/**
 * Blocks fetched together and committed together: each is one or two calls (block with transactions, and
 * its receipts), so a group goes out as a few JSON-RPC batches, and is stored as one database transaction.
 */
const BLOCKS_PER_COMMIT = 100;
/**
 * At most this many transactions per group (unless one block alone has more): what one commit stores and
 * what the pipeline holds per group. 500 rather than 1,000, with log ranges of 5,000 logs (`LOGS_PER_RANGE`):
 * about 20 MB less at the peak of a first start through 20,000 transactions, for 0.2-0.4 s more.
 */
const TRANSACTIONS_PER_COMMIT = 500;
/** Groups prepared (fetched, decoded, touched balances read) ahead of the one being stored. */
const PREFETCH = 1;

export type RangeDeps = {
  chain: ChainClient;
  db: Db;
  ingest: Ingest;
  addresses: readonly Hash[];
  filterHash: string;
  cursorName: string;
  /** blocks per fetch-and-commit group (default 100; tests make it small to cross group boundaries) */
  blocksPerCommit?: number;
  /** transactions per group, unless one block alone has more (default 500) */
  transactionsPerCommit?: number;
  /** called with the number of logs eth_getLogs returned for [from, to], as soon as they are in */
  onLogs?: (count: number, from: number, to: number) => void;
  /** called after each committed group with the cursor it committed and the transactions it stored */
  onCommitted?: (cursor: number, inserted: number) => void;
  /**
   * Database work the first commit waits for (and fails with), done while the range is fetched: the
   * indexer drops the deferrable indexes of a first backfill meanwhile.
   */
  ready?: Promise<unknown>;
};

/**
 * Index blocks [from, to] (seed steps 1-8) and commit them with the cursor at `to`: in groups of
 * `blocksPerCommit` blocks with logs, each committed with the cursor at its last block (`to` for the last
 * one) while the next group is fetched and prepared. Returns how many transactions were newly stored.
 */
export function indexRange(deps: RangeDeps, from: number, to: number): Promise<number> {
  return openRange(deps, from, to).commit();
}

/**
 * A range being fetched ahead of its commit (`openRange`): the indexer fetches the next range's headers, logs
 * and first groups while this one is committed, so a backfill does not wait at every range for the provider.
 */
export type OpenRange = {
  readonly from: number;
  readonly to: number;
  /**
   * Commit the range, once the range before it is committed: resolves to the transactions newly stored, or
   * throws what fetching or committing it threw (nothing after the last committed group is stored).
   */
  commit(): Promise<number>;
  /** Resolves once the range's logs are fetched and checked (rejects as its fetch does). */
  readonly fetched: Promise<unknown>;
  /** Resolves once every group of the range is being prepared: a range opened after it may start its own. */
  readonly allPreparing: Promise<void>;
  /** Give the range up without committing (or after its commit failed): resolves once nothing of it runs. */
  abandon(): Promise<void>;
};

/**
 * Start fetching blocks [from, to]: the headers of `from - 1` and `to` and the logs (once `after` resolves;
 * never if it rejects), then (once `startGroups` resolves too) the first groups' blocks, receipts and
 * decoding; nothing is written until `commit()`. The indexer opens the next range after the current one's
 * logs, so that a range the provider refuses costs no call for the range after it.
 *
 * Order matters for reorg safety: the headers of `from - 1` and `to` are read BEFORE the logs. If the chain
 * reorganizes after that, either a log's block hash disagrees with its block (caught here), or the stored
 * header of `to` is orphaned and the next chunk's check of `from - 1` finds it and rolls back. The stored
 * header of `from - 1` is read by `commit()`, when the range before is committed.
 */
export function openRange(
  deps: RangeDeps,
  from: number,
  to: number,
  options: { after?: Promise<unknown>; startGroups?: Promise<unknown> } = {},
): OpenRange {
  let abandoned = false;
  const fetching = Promise.resolve(options.after).then(() => {
    if (abandoned) throw new Error(`range ${from}-${to} abandoned before it was fetched`);
    return fetchRange(deps, from, to);
  });
  // Observed by commit() (or abandon()); not an unhandled rejection meanwhile.
  fetching.catch(() => undefined);

  // Group g is fetched, decoded and its touched balances read (`ingest.prepare`: the node and the main thread)
  // while group g - 1 is stored (the database: a worker thread for PGlite, another process for PostgreSQL).
  // Groups leave the queue once taken, so a committed group's data can be collected during the range.
  const inFlight: Promise<PreparedGroup>[] = [];
  let started = 0;
  let allStarted!: () => void;
  const allPreparing = new Promise<void>((resolve) => {
    allStarted = resolve;
  });
  const fill = (fetched: FetchedRange) => {
    while (!abandoned && started < fetched.groups.length && inFlight.length < 1 + PREFETCH) {
      inFlight.push(prepareGroup(deps, fetched, started++));
    }
    if (started === fetched.groups.length) allStarted();
  };
  const ready = Promise.all([fetching, options.startGroups]).then(([fetched]) => {
    fill(fetched);
    return fetched;
  });
  ready.catch(() => allStarted());

  const commit = async (): Promise<number> => {
    let inserted = 0;
    try {
      const fetched = await ready;
      await deps.ready;
      const { prev } = fetched;
      const stored = prev ? await getStoredBlock(deps.db, from - 1) : null;
      if (prev && stored && stored.hash !== prev.hash?.toLowerCase()) {
        throw new ReorgDetectedError(from - 1, `stored ${stored.hash}, chain has ${prev.hash}`);
      }
      // Each group is committed with the cursor at its last block, in block order: a crash or an error
      // between groups leaves a prefix of the range committed and nothing after it, like a smaller range would.
      let groupFrom = from;
      for (let g = 0; g < fetched.groups.length; g++) {
        const group = await inFlight.shift()!;
        fill(fetched);
        const count = await commitGroup(deps, groupFrom, group);
        inserted += count;
        deps.onCommitted?.(group.to, count);
        groupFrom = group.to + 1;
      }
      return inserted;
    } finally {
      // After an error, wait for the prepared groups too: none may fail unobserved or outlive the range.
      await abandon();
    }
  };

  const abandon = async (): Promise<void> => {
    abandoned = true;
    allStarted();
    await Promise.allSettled([ready, ...inFlight]);
  };

  return { from, to, commit, fetched: fetching, allPreparing, abandon };
}

/** What `fetchRange` read of a range: headers, logs by block, and the groups to commit. */
type FetchedRange = {
  from: number;
  to: number;
  prev: Block | null;
  endHeader: BlockHeader;
  byBlock: Map<number, { blockHash: Hash; hashes: Set<Hash> }>;
  groups: number[][];
};

/** The headers of `from - 1` and `to`, then the logs of [from, to], checked, and the groups to commit. */
async function fetchRange(deps: RangeDeps, from: number, to: number): Promise<FetchedRange> {
  const { chain } = deps;
  const [prev, end] = await Promise.all([
    from > 0 ? chain.client.getBlock({ blockNumber: BigInt(from - 1) }) : Promise.resolve(null),
    chain.client.getBlock({ blockNumber: BigInt(to) }),
  ]);
  const endHeader = toHeader(end);

  // The logs are reduced to the hashes per block at once: a range's logs can be the biggest thing a backfill
  // holds, and nothing after this needs them (each transaction's logs come again with its receipt).
  const byBlock = await chain.client
    .getLogs({ address: [...deps.addresses], fromBlock: BigInt(from), toBlock: BigInt(to) })
    .then((logs) => {
      deps.onLogs?.(logs.length, from, to);
      return hashesByBlock(logs, from, to);
    });
  // The range end read before the logs must still be canonical after them, before anything is committed:
  // its logs name its hash (fetchBlockTransactions then checks the block against them); without a log
  // there, its hash is read again. A reorg between the headers and eth_getLogs that leaves no log in that
  // block would otherwise go unseen, and if it also replaced blocks below `from`, the orphaned ones would
  // stay stored under blocks of the new chain, where the walk back to the common ancestor stops.
  const endNow =
    byBlock.get(to)?.blockHash ??
    (await chain.client.getBlock({ blockNumber: BigInt(to) })).hash?.toLowerCase();
  if (endNow !== endHeader.hash) throw new ReorgDetectedError(to, "range end changed while fetching");

  const groups = splitGroups(
    byBlock,
    deps.blocksPerCommit ?? BLOCKS_PER_COMMIT,
    deps.transactionsPerCommit ?? TRANSACTIONS_PER_COMMIT,
  );
  if (groups.length === 0) groups.push([]); // no log: the range end and the cursor are still committed
  return { from, to, prev, endHeader, byBlock, groups };
}

/** Fetch and prepare group `g` of a fetched range, for its commit with the cursor at its last block. */
function prepareGroup(deps: RangeDeps, range: FetchedRange, g: number): Promise<PreparedGroup> {
  const { chain } = deps;
  const part = range.groups[g]!;
  const last = g === range.groups.length - 1;
  const groupTo = last ? range.to : part.at(-1)!;
  const preparing = Promise.all(
    part.map((n) => {
      const entry = range.byBlock.get(n)!;
      return fetchBlockTransactions(chain, n, [...entry.hashes], entry.blockHash);
    }),
  ).then(async (fetched) => {
    const headers = [...fetched.map((b) => b.header), ...(last ? [range.endHeader] : [])];
    const prepared = await deps.ingest.prepare({
      source: "poll",
      transactions: fetched.flatMap((b) => b.transactions),
      headers,
      balanceBlock: groupTo,
      cursor: { name: deps.cursorName, blockNumber: groupTo, filterHash: deps.filterHash },
      refreshStale: last,
    });
    return { to: groupTo, headers, prepared };
  });
  // A prepared group may fail before its turn: the range awaits (and throws) it then, not as an unhandled
  // rejection now.
  preparing.catch(() => undefined);
  return preparing;
}

/** A group of blocks fetched and prepared for its commit with the cursor at `to`. */
type PreparedGroup = { to: number; headers: BlockHeader[]; prepared: PreparedCommit };

/**
 * The hashes of the transactions `logs` name, per block, with the block's hash. Throws `ReorgDetectedError`
 * for a log outside [from, to] or two hashes for one block (the provider answered from two chains).
 */
function hashesByBlock(
  logs: readonly Log[],
  from: number,
  to: number,
): Map<number, { blockHash: Hash; hashes: Set<Hash> }> {
  const byBlock = new Map<number, { blockHash: Hash; hashes: Set<Hash> }>();
  for (const log of logs) {
    if (log.blockNumber === null || log.blockHash === null || log.transactionHash === null) continue;
    const number = Number(log.blockNumber);
    if (number < from || number > to) {
      throw new ReorgDetectedError(
        number,
        `provider returned a log of block ${number} for range ${from}-${to}`,
      );
    }
    const entry = byBlock.get(number);
    const blockHash = log.blockHash.toLowerCase() as Hash;
    if (entry) {
      if (entry.blockHash !== blockHash)
        throw new ReorgDetectedError(number, "logs of one block name two hashes");
      entry.hashes.add(log.transactionHash.toLowerCase() as Hash);
    } else byBlock.set(number, { blockHash, hashes: new Set([log.transactionHash.toLowerCase() as Hash]) });
  }
  return byBlock;
}

/**
 * Split the blocks with logs, in order, into groups of at most `maxBlocks` blocks and, unless one block alone
 * has more, `maxTransactions` transactions: a group is what a commit stores and what the pipeline holds in
 * memory, so it is bounded by the work it carries, not only by its blocks.
 */
export function splitGroups(
  byBlock: ReadonlyMap<number, { hashes: ReadonlySet<Hash> }>,
  maxBlocks: number,
  maxTransactions: number,
): number[][] {
  const groups: number[][] = [];
  let current: number[] = [];
  let transactions = 0;
  for (const n of [...byBlock.keys()].sort((a, b) => a - b)) {
    const count = byBlock.get(n)!.hashes.size;
    if (current.length > 0 && (current.length >= maxBlocks || transactions + count > maxTransactions)) {
      groups.push(current);
      current = [];
      transactions = 0;
    }
    current.push(n);
    transactions += count;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** Attempts at committing a group whose span keeps holding new unverified blocks (webhooks storing ahead). */
const MAX_VERIFY_ATTEMPTS = 3;

/**
 * Commit a prepared group of [from, group.to] with the cursor at `group.to` (its headers include the range
 * end's, checked canonical after the logs, when it is the range's last group).
 *
 * Webhooks and track-tx may have stored blocks in the span ahead of the cursor, some of them orphaned since.
 * The commit checks the span under the ingest lock (`UnverifiedBlocksError`): then the blocks it named
 * and the group's highest block are read from the chain; a group no longer canonical is fetched again (the
 * range runs again, `ReorgDetectedError`), else the orphaned stored blocks are rolled back, the canonical ones
 * vouched for, and the commit runs again. A span holding no such block costs nothing more than the commit.
 */
async function commitGroup(deps: RangeDeps, from: number, group: PreparedGroup): Promise<number> {
  const { chain, ingest } = deps;
  const brought = new Map(group.headers.map((h) => [h.number, h.hash as string]));
  const verified = new Map<number, string>();
  for (let attempt = 1; ; attempt++) {
    try {
      const inserted = await ingest.store(group.prepared, { span: { from, to: group.to, verified } });
      return inserted.length;
    } catch (error) {
      if (!(error instanceof UnverifiedBlocksError)) throw error;
      if (attempt === MAX_VERIFY_ATTEMPTS) {
        // Run the range again (the indexer's reorg path), as for any block that changed under it.
        throw new ReorgDetectedError(error.blocks[0]?.number ?? from, error.message);
      }
      // The group's blocks are one chain, as its logs saw it (each fetched block was checked against them, the
      // range end too): its highest block is canonical now, or the whole group is stale and cannot judge the
      // stored blocks. A stale group committed over them would roll back canonical blocks a webhook stored
      // and leave its own orphans under them, where the walk back to the common ancestor stops (the fault
      // simulation, seed 15): it is fetched again instead.
      const top = Math.max(...brought.keys());
      const unknown = error.blocks.map((b) => b.number).filter((n) => !brought.has(n));
      const canonical = await canonicalHashes(chain, [top, ...unknown]);
      if (canonical.get(top) !== brought.get(top)) {
        throw new ReorgDetectedError(top, "the group's blocks were replaced while it was prepared");
      }
      for (const n of unknown) verified.set(n, canonical.get(n) ?? "");
      const orphaned = error.blocks
        .filter((b) => (brought.get(b.number) ?? verified.get(b.number)) !== b.hash)
        .map((b) => b.number);
      if (orphaned.length > 0) await ingest.rollback({ numbers: orphaned });
    }
  }
}
