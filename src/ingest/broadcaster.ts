import type { IndexedTransaction } from "../decode/decodeTransaction.ts";
import type { IngestSource } from "../store/encode.ts";
import type { RemovedTransaction } from "../store/removeBlocks.ts";

/** What the ingest pipeline announces after each commit, in block order. */
export type IngestEvent =
  | { type: "transaction"; transaction: IndexedTransaction; source: IngestSource }
  | { type: "removed"; removed: RemovedTransaction };

/**
 * The seam between ingestion and delivery: the in-process implementation below serves one process; a
 * PostgreSQL LISTEN/NOTIFY implementation serves replicas (scale-out). Listeners must not throw.
 */
export type Broadcaster = {
  publish(events: readonly IngestEvent[]): void;
  subscribe(listener: (event: IngestEvent) => void): () => void;
};

export function createLocalBroadcaster(): Broadcaster {
  const listeners = new Set<(event: IngestEvent) => void>();
  return {
    publish(events) {
      for (const event of events) for (const listener of listeners) listener(event);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
