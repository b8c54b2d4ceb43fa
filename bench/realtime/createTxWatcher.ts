import WebSocket from "ws";
import { NonRetryableError } from "../../src/internal/errors.ts";
import { wallClockMs } from "./latencyStats.ts";
import { transactionHashOf } from "./transactionHashOf.ts";

/** A WebSocket client subscribed to `transactions` that notes when each transaction message arrived. */
export type TxWatcher = {
  /**
   * Resolves with the wall-clock time (ms) the `transaction` message for `hash` arrived (already, or when it
   * does); rejects after `timeoutMs`.
   */
  arrival(hash: string, timeoutMs: number): Promise<number>;
  close(): void;
};

/**
 * Connect to protoscan's `/ws`, subscribe to `transactions` and resolve once the subscription is confirmed.
 * The arrival time is taken in the `message` callback, before anything else is done with the frame.
 */
export async function createTxWatcher(wsUrl: string): Promise<TxWatcher> {
  const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
  const arrived = new Map<string, number>();
  const waiters = new Map<string, (at: number) => void>();
  let subscribed: (() => void) | undefined;
  ws.on("message", (data: Buffer) => {
    const at = wallClockMs();
    const hash = transactionHashOf(data);
    if (hash === null) {
      if (data.includes('"type":"subscribed"')) subscribed?.();
      return;
    }
    if (arrived.has(hash)) return;
    arrived.set(hash, at);
    waiters.get(hash)?.(at);
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new NonRetryableError(`no subscription on ${wsUrl} in 10 s`)),
      10_000,
    );
    ws.once("error", reject);
    ws.once("open", () => ws.send(JSON.stringify({ op: "subscribe", topic: "transactions", id: 1 })));
    subscribed = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return {
    arrival(hash, timeoutMs) {
      const key = hash.toLowerCase();
      const at = arrived.get(key);
      if (at !== undefined) return Promise.resolve(at);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(key);
          reject(new NonRetryableError(`no WebSocket message for ${key} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.set(key, (time) => {
          clearTimeout(timer);
          waiters.delete(key);
          resolve(time);
        });
      });
    },
    close() {
      ws.terminate();
    },
  };
}
