import type { Hash } from "viem";
import { isChainError } from "../chain/errors.ts";
import type { HashOutcome, Ingest } from "../ingest/createIngest.ts";
import { ReorgDetectedError } from "../ingest/errors.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage, RetryableError, walk } from "../internal/errors.ts";
import type { Db } from "../store/createDatabase.ts";
import { markTracked, watchTracked } from "../store/tracked.ts";
import { getTransaction, type TransactionDetails } from "../store/transactionReads.ts";
import { DEFAULT_TRACKING_OPTIONS, type TrackingOptions } from "./trackingOptions.ts";

/** What `POST /api/track-tx` answers for one hash (SPEC §3.3). */
export type TrackOutcome =
  /** stored, now (`inserted`) or before; `details` is the stored transaction as GET /api/tx/:hash reads it */
  | { status: "indexed"; hash: Hash; inserted: boolean; details: TransactionDetails }
  /** not mined (or unknown to the node): in the watch list until `expiresAt` */
  | { status: "pending"; hash: Hash; expiresAt: Date }
  /** mined, but touches no configured contract (exclusive or shared) and no tracked token */
  | { status: "not_relevant"; hash: Hash };

/**
 * The node could not be asked about a hash (down, rate limiting, a reorg under the fetch). The hash is in the
 * watch list all the same, so it is not lost: the watcher asks again.
 */
export class TrackUnavailableError extends RetryableError {
  override name = "TrackUnavailableError";
  readonly hash: Hash;
  /**
   * The node answered, but the chain moved under the fetch (or the store still holds an orphaned block the
   * indexer has yet to roll back): not a node outage, and the answer says so.
   */
  readonly reorg: boolean;

  constructor(hash: Hash, cause: Error) {
    const reorg = cause instanceof ReorgDetectedError;
    super(
      reorg
        ? `the chain reorganized under the block of ${hash} while it was fetched`
        : `the node could not be asked about ${hash}`,
      { cause, details: errorMessage(cause) },
    );
    this.hash = hash;
    this.reorg = reorg;
  }
}

/** The request side of track-tx; the watch list is re-checked by the track watcher (`createTrackWatcher`). */
export type Tracker = {
  /**
   * Ingest `hash` through the one pipeline (`ingest.ingestHashes([hash], "track", hint)`): a stored hash is
   * not fetched again; a mined relevant one is stored, attributed to `hint` only when it touches that
   * protocol, and broadcast; an unmined one is put in the watch list for `ttlMs`. Identical calls in flight
   * at once share one ingestion. Throws `TrackUnavailableError` when the node fails (the hash is watched).
   */
  track(hash: Hash, hint?: string): Promise<TrackOutcome>;
};

export function createTracker(
  common: Common,
  deps: { db: Db; ingest: Ingest },
  overrides: Partial<TrackingOptions> = {},
): Tracker {
  const { db, ingest } = deps;
  const options: TrackingOptions = { ...DEFAULT_TRACKING_OPTIONS, ...overrides };
  const inFlight = new Map<string, Promise<TrackOutcome>>();

  /** Put `hash` in the watch list; `checked` says whether the node was just asked about it. */
  const watch = async (hash: Hash, hint: string | undefined, checked: boolean) => {
    const now = options.now();
    const expiresAt = new Date(now.getTime() + options.ttlMs);
    await watchTracked(db, { hash, hint: hint ?? null, now, expiresAt, checkedAt: checked ? now : null });
    return { status: "pending", hash, expiresAt } as const;
  };

  const run = async (hash: Hash, hint: string | undefined): Promise<TrackOutcome> => {
    let outcome: HashOutcome | undefined;
    try {
      [outcome] = await ingest.ingestHashes([hash], "track", hint);
    } catch (error) {
      await watch(hash, hint, false);
      const upstream = upstreamFailure(error);
      if (!upstream) throw error;
      const unavailable = new TrackUnavailableError(hash, upstream);
      common.logger.warn(
        { tx: hash, err: errorMessage(upstream) },
        unavailable.reorg
          ? "track-tx: the chain moved under the fetch; hash watched"
          : "track-tx: node unavailable; hash watched",
      );
      throw unavailable;
    }
    if (!outcome || outcome.status === "pending") {
      const pending = await watch(hash, hint, true);
      common.logger.debug({ tx: hash, expiresAt: pending.expiresAt }, "track-tx: not mined yet; watching");
      return pending;
    }
    if (outcome.status === "not_relevant") {
      await markTracked(db, [hash], "not_relevant", options.now());
      return { status: "not_relevant", hash };
    }
    const details = await getTransaction(db, hash);
    // Removed by a reorg between storing and reading: watch it like a transaction not mined yet.
    if (!details) return watch(hash, hint, true);
    await markTracked(db, [hash], "indexed", options.now());
    if (outcome.inserted) common.logger.info({ tx: hash, hint }, "track-tx: transaction stored");
    return { status: "indexed", hash, inserted: outcome.inserted, details };
  };

  return {
    track(hash, hint) {
      const lower = hash.toLowerCase() as Hash;
      const key = `${lower}:${hint ?? ""}`;
      const running = inFlight.get(key);
      if (running) return running;
      const started = run(lower, hint).finally(() => inFlight.delete(key));
      inFlight.set(key, started);
      return started;
    },
  };
}

/**
 * The node's failure behind a failure of the pipeline, if it is one: a classified chain error anywhere in the
 * cause chain (viem wraps what the transport throws), or the chain moving under the fetch.
 */
function upstreamFailure(error: unknown): Error | undefined {
  return walk(error, (e): e is Error => isChainError(e) || e instanceof ReorgDetectedError);
}
