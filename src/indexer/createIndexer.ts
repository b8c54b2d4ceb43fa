import { createHash } from "node:crypto";
import type { Hash } from "viem";
import { classifyRpcError } from "../chain/classifyRpcError.ts";
import type { ChainClient } from "../chain/createChainClient.ts";
import { isChainError, RangeTooLargeError, RateLimitedError } from "../chain/errors.ts";
import { type BlockRange, createLogRangeController } from "../chain/logRange.ts";
import type { Ingest } from "../ingest/createIngest.ts";
import { ReorgDetectedError } from "../ingest/errors.ts";
import { createBackgroundLoop } from "../internal/backgroundLoop.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage, walk } from "../internal/errors.ts";
import type { Db } from "../store/createDatabase.ts";
import { buildDeferredIndexes, deferIndexes, listDeferredIndexes } from "../store/deferredIndexes.ts";
import { CURSOR_NAME, getCursor } from "../store/indexerState.ts";
import { CATCHING_UP_BLOCKS } from "./catchingUp.ts";
import { ChainMismatchError } from "./errors.ts";
import { type OpenRange, openRange, type RangeDeps } from "./indexRange.ts";
import { locateCursor } from "./locateCursor.ts";
import { createProgress } from "./progress.ts";

const MAX_REORGS_PER_CYCLE = 10;
/**
 * A first backfill at least this long (blocks from the start block to the head) runs with the secondary
 * indexes deferred (store/deferredIndexes.ts) and builds them once caught up.
 */
export const DEFER_INDEXES_MIN_BLOCKS = 100;

export type IndexerStatus = {
  chainHead: number | null;
  indexedBlock: number | null;
  lagBlocks: number | null;
  lastRunAt: Date | null;
  running: boolean;
  /**
   * a cycle runs that began more than `CATCHING_UP_BLOCKS` below its target: a backfill until it ends, however
   * few blocks are left of it (its last blocks may hold hundreds of transactions each)
   */
  backfilling: boolean;
  /** why the indexer stopped for good (a `ChainMismatchError`), else null */
  failure: string | null;
};

export type CycleResult = {
  indexedBlock: number;
  target: number;
  stored: number;
  reorgs: number;
  /** `failed`: the database belongs to another chain; the loop stops (`onFatal`) */
  ended: "caught-up" | "rate-limited" | "error" | "stopped" | "failed";
};

/**
 * The polling indexer (SPEC §3.1, seed steps 1-8): every `pollIntervalSeconds`, scan `eth_getLogs` for the
 * exclusive contracts and tokens from the block after the cursor to `head - confirmations`, in adaptive
 * chunks, and hand each chunk to the ingest pipeline, which commits it with the cursor in one database
 * transaction. A crash therefore never leaves a gap nor stores a range twice. Reorgs are found by comparing
 * stored block hashes with the chain before each chunk is committed.
 */
export type Indexer = {
  start(): void;
  stop(): Promise<void>;
  /** Run one cycle now (tests, and the loop). */
  runCycle(): Promise<CycleResult>;
  status(): IndexerStatus;
};

export function createIndexer(
  common: Common,
  deps: {
    chain: ChainClient;
    db: Db;
    ingest: Ingest;
    /** called once when the indexer stops for good (the CLI then exits non-zero) */
    onFatal?: (error: ChainMismatchError) => void;
    /** DEFER_INDEXES_MIN_BLOCKS unless given (tests; `Infinity` never defers) */
    deferIndexesMinBlocks?: number;
  },
): Indexer {
  const { chain, db, ingest } = deps;
  const { config, logger } = common;
  const addresses = scannedAddresses(common);
  const filterHash = createHash("sha256").update(addresses.join(",")).digest("hex").slice(0, 16);
  const range = createLogRangeController({ maxChunk: config.indexer.logChunkBlocks });
  const status: IndexerStatus = {
    chainHead: null,
    indexedBlock: null,
    lagBlocks: null,
    lastRunAt: null,
    running: false,
    backfilling: false,
    failure: null,
  };
  // Stopped by stop() or the shutdown: the writers are built afresh each time this process wins the writer lock.
  const background = createBackgroundLoop(common.shutdown);
  let cycle: Promise<CycleResult> | undefined;
  let filterChecked = false;
  /** whether indexes wait in `deferred_indexes` (undefined: not read yet) */
  let indexesDeferred: boolean | undefined;

  /** The cursor's block (the block before the start block when none is stored yet), and whether one is. */
  const readCursor = async (): Promise<{ block: number; neverIndexed: boolean }> => {
    const cursor = await getCursor(db, CURSOR_NAME);
    if (cursor && !filterChecked && cursor.filterHash !== filterHash) {
      logger.warn(
        { indexedBlock: cursor.blockNumber },
        "the set of scanned contracts and tokens changed since blocks were indexed: earlier blocks are not rescanned for the new addresses (reindex into a fresh database to include their history)",
      );
    }
    filterChecked = true;
    return { block: cursor?.blockNumber ?? config.indexer.startBlock - 1, neverIndexed: cursor === null };
  };

  /**
   * If the block at the cursor is no longer canonical (or beyond a head that went back), roll back to the
   * common ancestor. Throws `ChainMismatchError` when the database belongs to another chain.
   */
  const verifyCursor = async (cursor: number, head: number): Promise<number> => {
    const ancestor = await locateCursor(chain, db, { cursor, head, floor: config.indexer.startBlock - 1 });
    if (ancestor === cursor) return cursor;
    logger.warn(
      { from: cursor, ancestor, depth: cursor - ancestor },
      "reorg detected: rolling back to the common ancestor",
    );
    await ingest.rollback({ after: ancestor }, CURSOR_NAME);
    return ancestor;
  };

  const runCycleNow = async (): Promise<CycleResult> => {
    status.running = true;
    const progress = createProgress(logger);
    let stored = 0;
    let reorgs = 0;
    /** dropping the deferrable indexes at the start of a first backfill, while the first range is fetched */
    let deferring: Promise<void> | undefined;
    /** the range after the one being committed, fetched meanwhile */
    let ahead: OpenRange | undefined;
    const start = await readCursor();
    let cursor = start.block;
    let target = cursor;
    try {
      const head = Number(await chain.client.getBlockNumber({ cacheTime: 0 }));
      target = head - config.indexer.confirmations;
      status.chainHead = head;
      common.metrics.indexerHeadBlock.set(head);
      cursor = await verifyCursor(cursor, head);
      // A stored cursor counts as indexed from the start of the cycle, also when nothing is left to index (a
      // restart at the head): the API and the catching-up rule (catchingUp.ts) read it.
      if (!start.neverIndexed) setIndexed(cursor);
      status.backfilling = target - cursor > CATCHING_UP_BLOCKS;
      if (indexesDeferred === undefined) {
        const deferred = (await listDeferredIndexes(db)).length;
        common.metrics.indexerDeferredIndexes.set(deferred);
        indexesDeferred = deferred > 0;
      }
      if (
        start.neverIndexed &&
        !indexesDeferred &&
        target - cursor >= (deps.deferIndexesMinBlocks ?? DEFER_INDEXES_MIN_BLOCKS)
      ) {
        // Dropped while the first range's headers and logs are fetched: the range's first commit waits for
        // it (indexRange's `ready`), and so does the rest of the cycle, below, whatever happens.
        const blocks = target - cursor;
        deferring = deferIndexes(db).then((names) => {
          indexesDeferred = true;
          common.metrics.indexerDeferredIndexes.set(names.length);
          logger.info(
            { indexes: names.length, blocks },
            "first backfill: secondary indexes are built once it has caught up (the API answers from scans until then)",
          );
        });
        deferring.catch(() => undefined);
      }
      progress.begin(cursor, target);
      // The range is committed in groups: the cursor follows each one, so a reorg or an error mid-range
      // resumes from what is committed.
      const rangeDeps: RangeDeps = {
        chain,
        db,
        ingest,
        addresses,
        filterHash,
        cursorName: CURSOR_NAME,
        onLogs: (count, from, to) => range.onLogs(count, { fromBlock: BigInt(from), toBlock: BigInt(to) }),
        onCommitted: (committed, inserted) => {
          stored += inserted;
          cursor = committed;
          setIndexed(cursor);
          progress.advance(cursor, inserted);
        },
        ...(deferring ? { ready: deferring } : {}),
      };
      const open = (next: BlockRange, options?: Parameters<typeof openRange>[3]) =>
        openRange(rangeDeps, Number(next.fromBlock), Number(next.toBlock), options);
      while (cursor < target) {
        if (background.signal.aborted) return result("stopped");
        // A range opened ahead starts at the cursor: it is kept only while the one before it commits in full,
        // whose last group moves the cursor to that range's end.
        const current = ahead ?? open(range.nextRange(BigInt(cursor + 1), BigInt(target)));
        ahead = undefined;
        // The next range's headers, logs and first groups are fetched while this one is committed, so a
        // backfill does not wait for the provider at every range: it is opened once this range's logs are in
        // (its span is the chunk it will have after this one worked, capped by the density of these logs),
        // and its groups start once this range's are all under way.
        const opening: Promise<OpenRange | undefined> =
          current.to < target
            ? current.fetched.then(
                () =>
                  open(range.rangeAfterSuccess(BigInt(current.to + 1), BigInt(target)), {
                    startGroups: current.allPreparing,
                  }),
                () => undefined,
              )
            : Promise.resolve(undefined);
        try {
          await current.commit();
          ahead = await opening;
          range.onSuccess();
        } catch (error) {
          await (await opening)?.abandon();
          // viem wraps what the transport throws (e.g. -32602 in InvalidParamsRpcError): look inside.
          const refused = chainErrorOf(error);
          if (refused instanceof RangeTooLargeError) {
            range.onRangeError(refused, {
              fromBlock: BigInt(current.from),
              toBlock: BigInt(current.to),
            });
            logger.debug(
              { from: current.from, to: current.to, suggested: refused.suggested },
              "provider refused the log range; shrinking",
            );
            continue;
          }
          if (error instanceof ReorgDetectedError && reorgs < MAX_REORGS_PER_CYCLE) {
            reorgs++;
            cursor = await verifyCursor(cursor, Number(await chain.client.getBlockNumber({ cacheTime: 0 })));
            setIndexed(cursor);
            continue;
          }
          throw error;
        }
      }
      await deferring;
      if (indexesDeferred) {
        const started = performance.now();
        const names = await buildDeferredIndexes(db);
        indexesDeferred = false;
        common.metrics.indexerDeferredIndexes.set(0);
        logger.info(
          { indexes: names.length, seconds: Number(((performance.now() - started) / 1000).toFixed(1)) },
          "backfill caught up: deferred indexes built",
        );
      }
      return result("caught-up");
    } catch (error) {
      // Shutting down aborts the RPC calls in flight: the cycle was stopped, it did not fail.
      if (background.signal.aborted) return result("stopped");
      if (error instanceof ChainMismatchError) {
        // Nothing to retry: polling would fail the same way forever.
        logger.error({ err: error.shortMessage, indexedBlock: cursor }, "indexer stopped");
        const first = status.failure === null;
        status.failure = error.shortMessage;
        if (first) deps.onFatal?.(error);
        return result("failed");
      }
      if (chainErrorOf(error) instanceof RateLimitedError) {
        logger.warn(
          { indexedBlock: cursor },
          "provider rate limit: cycle ended, resuming from the cursor next cycle",
        );
        return result("rate-limited");
      }
      logger.error(
        { err: errorMessage(error), indexedBlock: cursor },
        "indexer cycle failed; resuming from the cursor next cycle",
      );
      return result("error");
    } finally {
      await ahead?.abandon();
      await deferring?.catch(() => undefined);
      status.running = false;
      status.backfilling = false;
      status.lastRunAt = new Date();
      progress.end(cursor);
    }

    function result(ended: CycleResult["ended"]): CycleResult {
      return { indexedBlock: cursor, target, stored, reorgs, ended };
    }
  };

  const setIndexed = (block: number) => {
    status.indexedBlock = block;
    if (status.chainHead !== null) status.lagBlocks = Math.max(0, status.chainHead - block);
    common.metrics.indexerIndexedBlock.set(block);
  };

  const runCycle = () => {
    // One cycle at a time: a manual call while the loop runs waits for the running cycle.
    cycle ??= runCycleNow().finally(() => {
      cycle = undefined;
    });
    return cycle;
  };

  return {
    start() {
      background.start(async (signal) => {
        while (!signal.aborted) {
          const outcome = await runCycle();
          if (outcome.ended === "failed") return;
          // Keep going without waiting while far behind; otherwise wait for the next poll.
          if (outcome.ended === "caught-up" && outcome.indexedBlock < outcome.target) continue;
          await background.pause(config.indexer.pollIntervalSeconds * 1000);
        }
      });
    },
    async stop() {
      await background.stop();
      await cycle;
    },
    runCycle,
    status: () => ({ ...status }),
  };
}

/** Exclusive contracts and exclusive tokens, lowercase, sorted: the `address` filter of `eth_getLogs`. */
export function scannedAddresses(common: Common): Hash[] {
  const set = new Set<string>();
  for (const p of common.config.protocols) for (const c of p.contracts) if (c.exclusive) set.add(c.address);
  for (const t of common.config.tokens) if (t.exclusive) set.add(t.address);
  return [...set].sort() as Hash[];
}

/**
 * The classified chain error behind a failure, if it is one: viem wraps what the transport throws, so the
 * cause chain is searched first, then the classifier reads viem's own errors.
 */
function chainErrorOf(error: unknown) {
  const found = walk(error, isChainError);
  if (found) return found;
  if (error instanceof ReorgDetectedError || !(error instanceof Error) || !("shortMessage" in error))
    return undefined;
  return classifyRpcError(error);
}
