import type { Hash, Log } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { Ingest } from "../ingest/createIngest.ts";
import { ReorgDetectedError } from "../ingest/errors.ts";
import {
  type BlockHeader,
  type FetchedBlock,
  fetchBlockTransactions,
  toHeader,
} from "../ingest/fetchBlockTransactions.ts";
import type { Db } from "../store/createDatabase.ts";
import { getStoredBlock, getStoredBlocksInRange } from "../store/indexerState.ts";

/**
 * Blocks fetched together and committed together: each is one or two calls (block with transactions, and
 * its receipts), so a group goes out as a few JSON-RPC batches, and is stored as one database transaction.
 */
const BLOCKS_PER_COMMIT = 100;
/** Groups fetched ahead of the one being stored. */
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
  /** called after each committed group with the cursor it committed and the transactions it stored */
  onCommitted?: (cursor: number, inserted: number) => void;
};

/**
 * Index blocks [from, to] (seed steps 1-8) and commit them with the cursor at `to`: in groups of
 * `blocksPerCommit` blocks with logs, each committed with the cursor at its last block (`to` for the last
 * one) while the next group is fetched. Returns how many transactions were newly stored.
 *
 * Order matters for reorg safety: the headers of `from - 1` and `to` are read BEFORE the logs. If the chain
 * reorganizes after that, either a log's block hash disagrees with its block (caught here), or the stored
 * header of `to` is orphaned and the next chunk's check of `from - 1` finds it and rolls back.
 */
export async function indexRange(deps: RangeDeps, from: number, to: number): Promise<number> {
  const { chain, db } = deps;
  const [prev, end] = await Promise.all([
    from > 0 ? chain.client.getBlock({ blockNumber: BigInt(from - 1) }) : Promise.resolve(null),
    chain.client.getBlock({ blockNumber: BigInt(to) }),
  ]);
  if (prev) {
    const stored = await getStoredBlock(db, from - 1);
    if (stored && stored.hash !== prev.hash?.toLowerCase()) {
      throw new ReorgDetectedError(from - 1, `stored ${stored.hash}, chain has ${prev.hash}`);
    }
  }
  const endHeader = toHeader(end);

  const logs = await chain.client.getLogs({
    address: [...deps.addresses],
    fromBlock: BigInt(from),
    toBlock: BigInt(to),
  });

  const byBlock = new Map<number, { blockHash: Hash; hashes: Set<Hash> }>();
  for (const log of logs as Log[]) {
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

  // The range end read before the logs must still be canonical after them, before anything is committed:
  // its logs name its hash (fetchBlockTransactions then checks the block against them); without a log
  // there, its hash is read again. A reorg between the headers and eth_getLogs that leaves no log in that
  // block would otherwise go unseen, and if it also replaced blocks below `from`, the orphaned ones would
  // stay stored under blocks of the new chain, where the walk back to the common ancestor stops.
  const endNow =
    byBlock.get(to)?.blockHash ??
    (await chain.client.getBlock({ blockNumber: BigInt(to) })).hash?.toLowerCase();
  if (endNow !== endHeader.hash) throw new ReorgDetectedError(to, "range end changed while fetching");

  const numbers = [...byBlock.keys()].sort((a, b) => a - b);
  const size = deps.blocksPerCommit ?? BLOCKS_PER_COMMIT;
  const groups: number[][] = [];
  for (let i = 0; i < numbers.length; i += size) groups.push(numbers.slice(i, i + size));
  if (groups.length === 0) groups.push([]); // no log: the range end and the cursor are still committed
  const fetchGroup = (part: readonly number[]) => {
    const fetching = Promise.all(
      part.map((n) => {
        const entry = byBlock.get(n)!;
        return fetchBlockTransactions(chain, n, [...entry.hashes], entry.blockHash);
      }),
    );
    // A prefetched group may fail before its turn: the loop awaits (and throws) it then, not as an
    // unhandled rejection now.
    fetching.catch(() => undefined);
    return fetching;
  };

  // A pipeline: while one group is decoded and stored, the next PREFETCH groups are on the wire, so the
  // node (or provider) works while the database does. Each group is committed with the cursor at its last
  // block, in block order: a crash or an error between groups leaves a prefix of the range committed and
  // nothing after it, like a smaller range would.
  // Groups leave the queue once taken, so a committed group's data can be collected during the range.
  const inFlight = groups.slice(0, 1 + PREFETCH).map(fetchGroup);
  let inserted = 0;
  let groupFrom = from;
  try {
    for (let g = 0; g < groups.length; g++) {
      const fetched = await inFlight.shift()!;
      const next = g + 1 + PREFETCH;
      if (next < groups.length) inFlight.push(fetchGroup(groups[next]!));
      const last = g === groups.length - 1;
      const groupTo = last ? to : fetched.at(-1)!.header.number;
      const stored = await commitGroup(deps, groupFrom, groupTo, fetched, last ? endHeader : undefined);
      inserted += stored;
      deps.onCommitted?.(groupTo, stored);
      groupFrom = groupTo + 1;
    }
  } finally {
    // After an error, wait for the prefetched groups too: none may fail unobserved or outlive the range.
    await Promise.allSettled(inFlight);
  }
  return inserted;
}

/**
 * Commit the fetched blocks of [from, to] with the cursor at `to`. `end` is the range end's header (checked
 * canonical after the logs); it is given for the range's last group only, to be stored with it.
 */
async function commitGroup(
  deps: RangeDeps,
  from: number,
  to: number,
  fetched: readonly FetchedBlock[],
  end: BlockHeader | undefined,
): Promise<number> {
  const { chain, db, ingest } = deps;
  // Blocks stored ahead of the cursor by webhooks or track-tx: drop those the canonical chain replaced.
  const ahead = await getStoredBlocksInRange(db, from - 1, to);
  if (ahead.length > 0) {
    const known = new Map(fetched.map((b) => [b.header.number, b.header.hash as string]));
    if (end) known.set(end.number, end.hash);
    const unknown = ahead.filter((b) => !known.has(b.number));
    const headers = await Promise.all(
      unknown.map((b) => chain.client.getBlock({ blockNumber: BigInt(b.number) })),
    );
    headers.forEach((h, i) => {
      known.set(unknown[i]!.number, h.hash?.toLowerCase() ?? "");
    });
    const orphaned = ahead.filter((b) => known.get(b.number) !== b.hash).map((b) => b.number);
    if (orphaned.length > 0) await ingest.rollback({ numbers: orphaned });
  }

  const inserted = await ingest.commit({
    source: "poll",
    transactions: fetched.flatMap((b) => b.transactions),
    headers: [...fetched.map((b) => b.header), ...(end ? [end] : [])],
    balanceBlock: to,
    cursor: { name: deps.cursorName, blockNumber: to, filterHash: deps.filterHash },
  });
  return inserted.length;
}
