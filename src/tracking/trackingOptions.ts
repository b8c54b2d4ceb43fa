/**
 * How the track-tx watch list behaves (SPEC §3.3). Tests shorten the times and inject `now` to move the clock;
 * the defaults are the contract: watched for 10 minutes, re-checked at least every 5 seconds.
 */
export type TrackingOptions = {
  /** How long a hash the node does not know as mined is watched (default 10 minutes). */
  ttlMs: number;
  /** Pause between two passes of the watcher over the pending list (a pass itself is one batch per hint). */
  intervalMs: number;
  /**
   * While the chain head has not moved, a pass asks the node only about watches it was never asked about;
   * every watch is asked about again at least this often anyway (a reorg at the same height can mine one).
   */
  recheckMs: number;
  /** Hashes handed to the ingest pipeline at once (one batched round of receipts). */
  batchSize: number;
  /** The clock: expiry times are computed and compared with it, never with the database's. */
  now: () => Date;
};

export const DEFAULT_TRACKING_OPTIONS: TrackingOptions = {
  ttlMs: 10 * 60_000,
  intervalMs: 2_000,
  recheckMs: 4_000,
  batchSize: 100,
  now: () => new Date(),
};
