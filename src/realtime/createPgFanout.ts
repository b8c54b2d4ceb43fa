import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import { NO_VALUE, type TransactionValue, type TransactionValuer } from "../prices/transactionValues.ts";
import type { PostgresDatabase } from "../store/createDatabase.ts";
import { type DedicatedConnection, openDedicatedConnection } from "../store/dedicatedConnection.ts";
import {
  type EventDetails,
  OUTBOX_CHANNEL,
  type OutboxRow,
  outboxBounds,
  readEventDetails,
  readOutboxAfter,
} from "../store/outbox.ts";
import type { HubEvent, HubSource, PreparedEvent } from "./createHub.ts";
import { topicsOf } from "./eventTopics.ts";
import type { TransactionJsonOf } from "./serverMessages.ts";

export type PgFanoutOptions = {
  /**
   * Read the outbox at least this often even without a notification (default 2 s). The read also proves the
   * LISTEN session alive: a session that stopped answering is replaced.
   */
  pollIntervalMs: number;
  /** Wait before reconnecting after the session failed (default 1 s). */
  reconnectDelayMs: number;
  /** Outbox rows read per query (default 500). */
  batchSize: number;
  /** Client-side limit of the session's queries (default 10 s). */
  queryTimeoutMs: number;
};

export const DEFAULT_PG_FANOUT_OPTIONS: PgFanoutOptions = {
  pollIntervalMs: 2_000,
  reconnectDelayMs: 1_000,
  batchSize: 500,
  queryTimeoutMs: 10_000,
};

/**
 * Cross-process fan-out (SPEC §5 last point, §9): every process that serves WebSockets on PostgreSQL takes
 * its hub's events from here instead of from its own ingest pipeline, so each replica's clients receive every
 * broadcast exactly once, whichever process stored the transaction.
 */
export type PgFanout = HubSource & {
  /** Connect and LISTEN; resolves once listening (events committed from then on are delivered) or failed. */
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): { listening: boolean; lastSeq: number | null };
};

/**
 * The PostgreSQL implementation of the hub's source. Writers append every stored and removed transaction to
 * `broadcast_outbox` in the committing database transaction and NOTIFY `protoscan_outbox` with the new
 * `seq` (store/outbox.ts); the payload is only a wake-up, so NOTIFY's 8000-byte limit never matters. This
 * listener, on a session of its own, reads the rows after the last `seq` it delivered, fetches each
 * transaction's stored rows, and emits one prepared event per row in `seq` order — commit order, which is
 * block order for the polling indexer. Nothing is lost or repeated when the session drops: the listener
 * reconnects, LISTENs again and catches up from its last `seq` (rows are kept for the outbox retention,
 * 15 minutes by default; a listener away longer counts what it missed in `protoscan_fanout_missed_events_total`).
 *
 * A `transaction` row whose stored copy is gone (a reorg removed it before it was read) or moved to another
 * block is skipped, and so is the `removed` row that follows it: clients never hear of it.
 */
export function createPgFanout(
  common: Common,
  deps: {
    database: PostgresDatabase;
    /** a stored transaction's Transaction JSON (api/toTransactionJson.ts `transactionJsonOf`) */
    transactionJson: TransactionJsonOf;
    options?: Partial<PgFanoutOptions>;
    /** values the transactions at block time (SPEC §10.2); without it they are sent with null values */
    valueTransactions?: TransactionValuer;
  },
): PgFanout {
  const options: PgFanoutOptions = { ...DEFAULT_PG_FANOUT_OPTIONS, ...deps.options };
  const logger = common.logger.child({ subsystem: "fanout" });
  const { metrics } = common;
  const listeners = new Set<(event: HubEvent) => void>();
  const stopping = new AbortController();
  /** the last `seq` delivered (null until the first session: history before it is not replayed) */
  let lastSeq: number | null = null;
  let listening = false;
  let loop: Promise<void> | undefined;
  let started: Promise<void> | undefined;
  /** transaction rows skipped because their stored copy was gone: their `removed` row is skipped too */
  const skipped = new Map<string, string>();

  let pendingWake = false;
  let wakeUp: (() => void) | undefined;
  const wake = () => {
    pendingWake = true;
    wakeUp?.();
  };
  const waitForWake = (ms: number) =>
    new Promise<void>((resolve) => {
      if (pendingWake || stopping.signal.aborted) {
        pendingWake = false;
        return resolve();
      }
      const timer = setTimeout(done, ms);
      wakeUp = done;
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        pendingWake = false;
        resolve();
      }
    });

  const emit = (event: PreparedEvent) => {
    metrics.fanoutEvents.inc({ type: event.type });
    for (const listener of listeners) listener(event);
  };

  const prepare = (
    row: OutboxRow,
    details: Map<string, EventDetails>,
    values: ReadonlyMap<string, TransactionValue>,
  ): PreparedEvent | null => {
    if (row.kind === "removed") {
      if (skipped.get(row.txHash) === row.blockHash) {
        skipped.delete(row.txHash);
        return null;
      }
      const detail = row.detail ?? { protocol: "", parties: [], tokens: [] };
      return {
        type: "removed",
        prepared: true,
        topics: topicsOf(detail.protocol, detail.parties, detail.tokens),
        data: JSON.stringify({ txHash: row.txHash, blockNumber: row.blockNumber, blockHash: row.blockHash }),
      };
    }
    const stored = details.get(row.txHash);
    if (!stored || stored.tx.blockHash !== row.blockHash) {
      skipped.set(row.txHash, row.blockHash);
      if (skipped.size > 10_000) skipped.delete(skipped.keys().next().value as string);
      return null;
    }
    const json = deps.transactionJson(
      stored.tx,
      stored.logs,
      stored.transfers,
      values.get(row.txHash) ?? NO_VALUE,
    );
    return {
      type: "transaction",
      prepared: true,
      topics: topicsOf(stored.tx.protocol, stored.parties, [
        ...new Set(stored.transfers.map((t) => t.tokenAddress)),
      ]),
      data: JSON.stringify(json),
    };
  };

  /** The batch's transactions valued at block time, in one call; unvalued (null) when that fails. */
  const valueDetails = async (details: Map<string, EventDetails>) => {
    if (!deps.valueTransactions || details.size === 0) return new Map<string, TransactionValue>();
    try {
      return await deps.valueTransactions([...details.values()]);
    } catch (error) {
      logger.warn({ error: errorMessage(error) }, "transactions sent without USD values");
      return new Map<string, TransactionValue>();
    }
  };

  /** Deliver every committed row after `lastSeq`, a batch at a time. */
  const drain = async (connection: DedicatedConnection, from: number) => {
    let after = from;
    for (;;) {
      const rows = await readOutboxAfter(connection.db, after, options.batchSize);
      if (rows.length === 0) return;
      const hashes = rows.filter((r) => r.kind === "transaction").map((r) => r.txHash);
      // On the pool: these are several queries at once, and a session runs one at a time.
      const details = await readEventDetails(deps.database.db, hashes);
      const values = await valueDetails(details);
      for (const row of rows) {
        if (stopping.signal.aborted) return;
        const event = prepare(row, details, values);
        if (event) emit(event);
        after = row.seq;
        lastSeq = row.seq;
      }
      if (rows.length < options.batchSize) return;
    }
  };

  /** One LISTEN session, until it fails or we stop. */
  const session = async (onListening: () => void) => {
    const connection = await openDedicatedConnection(deps.database, {
      name: "protoscan-fanout",
      queryTimeoutMs: options.queryTimeoutMs,
    });
    try {
      connection.client.on("notification", (message) => {
        if (message.channel === OUTBOX_CHANNEL) wake();
      });
      void connection.closed.then(wake);
      await connection.client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      const bounds = await outboxBounds(connection.db);
      if (lastSeq === null) {
        lastSeq = bounds.newest;
      } else {
        metrics.fanoutReconnects.inc();
        // Rows between what we delivered and the oldest kept were pruned (or rolled back: then nothing).
        const missed = bounds.oldest > lastSeq + 1 ? bounds.oldest - lastSeq - 1 : 0;
        if (missed > 0) {
          metrics.fanoutMissed.inc(missed);
          logger.warn({ lastSeq, oldest: bounds.oldest, missed }, "fan-out: events pruned before delivery");
        }
        logger.info({ lastSeq }, "fan-out: listening again, catching up");
      }
      listening = true;
      onListening();
      while (!stopping.signal.aborted && !connection.isClosed()) {
        await drain(connection, lastSeq);
        await waitForWake(options.pollIntervalMs);
      }
    } finally {
      listening = false;
      await connection.close();
    }
  };

  const run = async (onListening: () => void) => {
    while (!stopping.signal.aborted) {
      try {
        await session(onListening);
      } catch (error) {
        if (!stopping.signal.aborted) {
          logger.warn({ err: errorMessage(error) }, "fan-out: LISTEN session failed; reconnecting");
        }
      }
      // The first attempt counts as done even when it failed: startup goes on, the loop keeps trying.
      onListening();
      pendingWake = false; // a wake-up from the dead session must not skip the delay
      if (!stopping.signal.aborted) await waitForWake(options.reconnectDelayMs);
    }
  };

  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start() {
      started ??= new Promise<void>((resolve) => {
        loop = run(resolve);
      });
      return started;
    },
    async stop() {
      stopping.abort();
      wake();
      await loop;
    },
    status: () => ({ listening, lastSeq }),
  };
}
