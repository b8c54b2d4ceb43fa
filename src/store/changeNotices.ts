import { errorMessage } from "../internal/errors.ts";
import type { Logger } from "../internal/logger.ts";
import type { Database } from "./createDatabase.ts";
import { type DedicatedConnection, openDedicatedConnection } from "./dedicatedConnection.ts";

/** The channel migration 0009 NOTIFYs on commit, with the written table's name as the payload. */
export const CHANGES_CHANNEL = "protoscan_changes";

/** Tables whose committed writes are announced on `CHANGES_CHANNEL` (migrations 0009 and 0015). */
export type NotifiedTable = "token_balances" | "indexer_cursor" | "price_history";

/** What listeners hear: a table a commit wrote, or `"*"` when notices may have been missed (session lost). */
export type ChangeNotice = NotifiedTable | "*";

/**
 * Committed writes to the tables of migration 0009, as heard by this process: the read API empties the caches
 * built from those tables on each notice. On PGlite the notice comes from the embedded database itself (it
 * runs in this process, so every writer is heard); on PostgreSQL from a LISTEN session of its own, which is
 * replaced when it fails, with a `"*"` notice and `listening()` false until it listens again.
 */
export type ChangeNotices = {
  /** whether every committed change is being heard now; caches must not answer while it is false */
  listening(): boolean;
  subscribe(listener: (notice: ChangeNotice) => void): () => void;
  close(): Promise<void>;
};

/** PGlite's LISTEN (`PGlite.listen`), when the embedded database's client offers it. */
type Listener = {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
};

export type ChangeNoticeOptions = {
  logger: Logger;
  /** PostgreSQL: how often the LISTEN session is proven alive with a statement (default 5 s) */
  pingIntervalMs?: number;
  /** PostgreSQL: the wait before opening a failed session again (default 1 s) */
  reconnectDelayMs?: number;
};

/**
 * Start hearing change notices on `database`. Resolves once the first LISTEN succeeded or failed; after a
 * failure it keeps trying in the background (`listening()` stays false meanwhile).
 */
export async function listenForChanges(
  database: Database,
  options: ChangeNoticeOptions,
): Promise<ChangeNotices> {
  const listeners = new Set<(notice: ChangeNotice) => void>();
  const emit = (notice: ChangeNotice) => {
    for (const listener of listeners) listener(notice);
  };
  const subscribe = (listener: (notice: ChangeNotice) => void) => {
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  };

  if (database.kind === "pglite") {
    const client = database.client as Partial<Listener> & { readonly closed: boolean };
    if (typeof client.listen !== "function") {
      // A client that cannot LISTEN: nothing is heard, so the caches that need notices answer from the database.
      options.logger.warn("change notices: the embedded database cannot LISTEN; balance caches are off");
      return { listening: () => false, subscribe, close: async () => undefined };
    }
    const unlisten = await client.listen(CHANGES_CHANNEL, (payload) => emit(payload as ChangeNotice));
    return {
      listening: () => !client.closed,
      subscribe,
      close: () => (client.closed ? Promise.resolve() : unlisten().catch(() => undefined)),
    };
  }

  const pingIntervalMs = options.pingIntervalMs ?? 5_000;
  const reconnectDelayMs = options.reconnectDelayMs ?? 1_000;
  const stopping = new AbortController();
  let listening = false;
  let connection: DedicatedConnection | undefined;

  // One pause at a time; stopping and a lost session end it early. A single listener each (not one per
  // pause): the loop pauses every few seconds for as long as the process runs.
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      };
    });
  stopping.signal.addEventListener("abort", () => wake?.(), { once: true });

  /** One LISTEN session, until it fails or we stop. */
  const session = async (onListening: () => void) => {
    connection = await openDedicatedConnection(database, { name: "protoscan-api-changes" });
    const current = connection;
    try {
      current.client.on("notification", (message) => {
        if (message.channel === CHANGES_CHANNEL) emit((message.payload ?? "*") as ChangeNotice);
      });
      void current.closed.then(() => wake?.());
      await current.client.query(`LISTEN ${CHANGES_CHANNEL}`);
      listening = true;
      // Whatever was committed before LISTEN took effect (start, or the gap of a lost session) is unheard.
      emit("*");
      onListening();
      while (!stopping.signal.aborted && !current.isClosed()) {
        await pause(pingIntervalMs);
        if (!stopping.signal.aborted && !current.isClosed()) await current.client.query("select 1");
      }
    } finally {
      listening = false;
      emit("*");
      await current.close();
    }
  };

  let firstAttempt!: () => void;
  const started = new Promise<void>((resolve) => {
    firstAttempt = resolve;
  });
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await session(firstAttempt);
      } catch (error) {
        if (!stopping.signal.aborted) {
          options.logger.warn(
            { err: errorMessage(error) },
            "change notices: LISTEN session failed; reconnecting",
          );
        }
      }
      firstAttempt();
      if (!stopping.signal.aborted) await pause(reconnectDelayMs);
    }
  })();
  await started;
  return {
    listening: () => listening,
    subscribe,
    async close() {
      stopping.abort();
      await connection?.close();
      await loop;
    },
  };
}
