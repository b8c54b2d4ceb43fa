import type { IngestEvent } from "../ingest/broadcaster.ts";
import { errorMessage } from "../internal/errors.ts";
import type { Logger } from "../internal/logger.ts";
import { NO_VALUE, type TransactionValue, type TransactionValuer } from "../prices/transactionValues.ts";
import { encodeTransaction, encodeTransfers } from "../store/encode.ts";
import type { HubEvent, HubSource, PreparedEvent } from "./createHub.ts";
import { eventTopics } from "./eventTopics.ts";
import { serializeEventData, type TransactionJsonOf } from "./serverMessages.ts";

/** A queued event: an ingest transaction to value, with its topics, or an event that passes through as it is. */
type Queued =
  | { event: Extract<IngestEvent, { type: "transaction" }>; topics: string[] }
  | { event: HubEvent; topics?: undefined };

/**
 * The events of `source` with their transactions valued at block time (SPEC §10.2), for the WebSocket hub:
 * each transaction event of this process becomes a prepared event whose data carries `valueUsd` like
 * `GET /api/tx/:hash`. Events keep their order; those that arrive while a batch is valued are valued together
 * (one price-history call per batch). Prepared events (the PostgreSQL fan-out values its own) and removals
 * pass through in their place. A failed valuation sends the transactions unvalued (null) rather than not at all.
 * A transaction event that no listener wants (their `wanted` says no subscriber holds any of its topics as it
 * arrives) is dropped before it is valued: a backfill with nobody connected costs no price reads and no JSON.
 */
export function valueEvents(
  source: HubSource,
  deps: { transactionJson: TransactionJsonOf; value: TransactionValuer; logger: Logger },
): HubSource {
  /** each listener with what it wants (undefined: everything) */
  const listeners = new Map<
    (event: HubEvent) => void,
    ((topics: readonly string[]) => boolean) | undefined
  >();
  let unsubscribe: (() => void) | undefined;
  let queue: Queued[] = [];
  let running = false;

  const emit = (event: HubEvent) => {
    for (const listener of listeners.keys()) listener(event);
  };
  const wanted = (topics: readonly string[]): boolean => {
    for (const wants of listeners.values()) if (!wants || wants(topics)) return true;
    return false;
  };

  async function valueBatch(batch: Queued[]): Promise<void> {
    const ingest = batch.flatMap((q) => (q.topics ? [q.event] : []));
    let values = new Map<string, TransactionValue>();
    try {
      values = await deps.value(
        ingest.map((e) => ({
          tx: encodeTransaction(e.transaction, e.source),
          transfers: encodeTransfers(e.transaction),
        })),
      );
    } catch (error) {
      deps.logger.warn({ error: errorMessage(error) }, "transactions sent without USD values");
    }
    for (const queued of batch) {
      if (!queued.topics) {
        emit(queued.event);
        continue;
      }
      const { event, topics } = queued;
      const prepared: PreparedEvent = {
        type: "transaction",
        prepared: true,
        topics,
        data: serializeEventData(
          event,
          deps.transactionJson,
          values.get(event.transaction.hash.toLowerCase()) ?? NO_VALUE,
        ),
      };
      emit(prepared);
    }
  }

  async function run(): Promise<void> {
    running = true;
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await valueBatch(batch);
      } catch (error) {
        // Must not stop the stream: later events are still delivered, and the error is visible.
        deps.logger.error({ error: errorMessage(error) }, "websocket events not delivered");
      }
    }
    running = false;
  }

  const onEvent = (event: HubEvent) => {
    if ("prepared" in event || event.type !== "transaction") queue.push({ event });
    else {
      // Its topics, computed once: asked of the listeners now, sent with the prepared event later.
      const topics = eventTopics(event);
      if (!wanted(topics)) return;
      queue.push({ event, topics });
    }
    if (!running) void run();
  };

  return {
    subscribe(listener, wants) {
      listeners.set(listener, wants);
      unsubscribe ??= source.subscribe(onEvent);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) {
          unsubscribe?.();
          unsubscribe = undefined;
        }
      };
    },
  };
}
