import type { Hash } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { Broadcaster } from "../ingest/broadcaster.ts";
import type { Ingest } from "../ingest/createIngest.ts";
import { createBackgroundLoop } from "../internal/backgroundLoop.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import type { Db } from "../store/createDatabase.ts";
import {
  expireTracked,
  getPendingTracked,
  markTracked,
  type TrackedSource,
  type TrackedTransaction,
  watchTracked,
} from "../store/tracked.ts";
import { DEFAULT_TRACKING_OPTIONS, type TrackingOptions } from "./trackingOptions.ts";

/** What one pass over the watch list did. */
export type WatchPass = {
  /** hashes handed to the ingest pipeline */
  checked: number;
  /** stored by this pass (or found stored, e.g. by polling) */
  indexed: number;
  notRelevant: number;
  /** pending watches whose 10 minutes ran out */
  expired: number;
  /** checked and still not mined */
  stillPending: number;
  /** the chain head seen at the start of the pass */
  head: number;
};

/**
 * Re-checks the track-tx watch list (SPEC §3.3) until each hash is mined or expires: every `intervalMs`
 * (default 2 s, the contract is at least every 5 s), pending watches past their expiry are marked `expired`,
 * then the others go through the one ingest pipeline in batches, one call per protocol hint
 * (`ingest.ingestHashes(hashes, "track", hint)`, which stores and broadcasts). The list lives in the
 * database, so hashes submitted to an `--role api` process, or before a restart, are watched too.
 *
 * A hash cannot become mined without a new block: while the head stays where the last complete pass saw it,
 * only watches the node was never asked about are checked, and all of them again every `recheckMs` (4 s),
 * which keeps the receipt calls bounded when blocks are slower than the interval (12 s on mainnet).
 *
 * With `events` (the ingest broadcaster), a track-tx or webhook transaction that a reorg removed is watched
 * again (a track-tx one hinted to the protocol it had) for `ttlMs`, so it is stored again, under its own
 * source, once it is mined again, now or later. This watcher is the one owner of that re-check:
 * `Ingest.rollback` only announces what it removed (docs/indexing.md, "Transactions stored ahead of the cursor").
 */
export type TrackWatcher = {
  start(): void;
  stop(): Promise<void>;
  /** One pass over the watch list now (tests drive the watcher with it and a fake clock). */
  checkOnce(): Promise<WatchPass>;
};

export function createTrackWatcher(
  common: Common,
  deps: { db: Db; chain: ChainClient; ingest: Ingest; events?: Pick<Broadcaster, "subscribe"> },
  overrides: Partial<TrackingOptions> = {},
): TrackWatcher {
  const { db, chain, ingest } = deps;
  const logger = common.logger.child({ module: "track-watcher" });
  const options: TrackingOptions = { ...DEFAULT_TRACKING_OPTIONS, ...overrides };
  // Stopped by stop() or the shutdown: the writers are built afresh each time this process wins the writer lock.
  const background = createBackgroundLoop(common.shutdown);
  /** the head at the start of the last pass that completed */
  let lastHead: number | undefined;
  /** when (by the clock) the last complete pass over every watch started */
  let lastFullPassAt = Number.NEGATIVE_INFINITY;
  let unsubscribe: (() => void) | undefined;

  /**
   * Put back in the watch list a track-tx or webhook transaction a reorg removed (never asked about since),
   * to be stored again under its own source if it is mined again. Polling finds its own transactions again.
   * A track-tx one keeps its protocol as hint; a webhook one had none and gets none.
   */
  const rewatch = async (removed: { hash: string; protocol: string; source: TrackedSource }) => {
    const now = options.now();
    const expiresAt = new Date(now.getTime() + options.ttlMs);
    const hint = removed.source === "track" ? removed.protocol : null;
    await watchTracked(db, {
      hash: removed.hash,
      hint,
      now,
      expiresAt,
      checkedAt: null,
      source: removed.source,
    });
    logger.info(
      { tx: removed.hash, source: removed.source },
      "transaction removed by a reorg; watched again",
    );
  };

  const checkBatch = async (batch: readonly TrackedTransaction[], pass: WatchPass) => {
    // One ingest call per (source, hint): the source is what the transaction is stored under.
    const groups = new Map<string, { source: TrackedSource; hint: string | undefined; hashes: Hash[] }>();
    for (const watch of batch) {
      const key = `${watch.source}/${watch.protocolHint ?? ""}`;
      const group = groups.get(key) ?? {
        source: watch.source,
        hint: watch.protocolHint ?? undefined,
        hashes: [],
      };
      group.hashes.push(watch.txHash as Hash);
      groups.set(key, group);
    }
    for (const { source, hint, hashes } of groups.values()) {
      const outcomes = await ingest.ingestHashes(hashes, source, hint);
      const now = options.now();
      const by = (status: string) => outcomes.filter((o) => o.status === status).map((o) => o.hash);
      const indexed = by("indexed");
      const irrelevant = by("not_relevant");
      const pending = by("pending");
      await markTracked(db, indexed, "indexed", now);
      await markTracked(db, irrelevant, "not_relevant", now);
      await markTracked(db, pending, "pending", now);
      pass.checked += hashes.length;
      pass.indexed += indexed.length;
      pass.notRelevant += irrelevant.length;
      pass.stillPending += pending.length;
    }
  };

  const checkOnce = async (): Promise<WatchPass> => {
    const pass: WatchPass = { checked: 0, indexed: 0, notRelevant: 0, expired: 0, stillPending: 0, head: 0 };
    const now = options.now();
    const expired = await expireTracked(db, now);
    pass.expired = expired.length;
    if (expired.length > 0) {
      logger.info(
        { expired: expired.length, sample: expired.slice(0, 5) },
        "track-tx: watches expired unmined",
      );
    }
    pass.head = Number(await chain.client.getBlockNumber({ cacheTime: 0 }));
    const uncheckedOnly = pass.head === lastHead && now.getTime() - lastFullPassAt < options.recheckMs;
    let afterHash = "";
    for (;;) {
      const batch = await getPendingTracked(db, { now, afterHash, limit: options.batchSize, uncheckedOnly });
      if (batch.length === 0) break;
      await checkBatch(batch, pass);
      afterHash = batch[batch.length - 1]!.txHash;
      if (batch.length < options.batchSize) break;
    }
    lastHead = pass.head;
    if (!uncheckedOnly) lastFullPassAt = now.getTime();
    if (pass.indexed > 0 || pass.notRelevant > 0) {
      logger.info(
        { indexed: pass.indexed, notRelevant: pass.notRelevant, stillPending: pass.stillPending },
        "track-tx: watched transactions settled",
      );
    }
    return pass;
  };

  return {
    start() {
      const started = background.start(async (abort) => {
        while (!abort.aborted) {
          try {
            await checkOnce();
          } catch (error) {
            // The node or the database failed: the watch list is intact, the next pass asks again.
            if (!abort.aborted) logger.warn({ err: errorMessage(error) }, "track-tx watcher: pass failed");
          }
          await background.pause(options.intervalMs);
        }
      });
      if (!started) return;
      unsubscribe = deps.events?.subscribe((event) => {
        if (event.type !== "removed") return;
        const { source } = event.removed;
        if (source !== "track" && source !== "webhook") return;
        rewatch({ ...event.removed, source }).catch((error: unknown) => {
          logger.warn({ tx: event.removed.hash, err: errorMessage(error) }, "track-tx: could not re-watch");
        });
      });
    },
    async stop() {
      unsubscribe?.();
      await background.stop();
    },
    checkOnce,
  };
}
