import type { Shutdown } from "./shutdown.ts";
import { sleep } from "./sleep.ts";

/**
 * The skeleton every background worker shares (the polling indexer, the webhook inbox worker, the track-tx
 * watcher): one loop, stopped by `stop()` or by the process' shutdown, whichever comes first.
 */
export type BackgroundLoop = {
  /** aborted once the loop is told to stop (by `stop()` or by the shutdown) */
  readonly signal: AbortSignal;
  /** Run `body` as the loop; false (and nothing runs) when a loop was started before. */
  start(body: (signal: AbortSignal) => Promise<void>): boolean;
  /** Wait `ms` milliseconds, or less when the loop is told to stop; never rejects. */
  pause(ms: number): Promise<void>;
  /** Tell the loop to stop and wait for it to end; it stops for good. */
  stop(): Promise<void>;
};

export function createBackgroundLoop(shutdown: Pick<Shutdown, "signal">): BackgroundLoop {
  const stopping = new AbortController();
  const onShutdown = () => stopping.abort();
  shutdown.signal.addEventListener("abort", onShutdown, { once: true });
  let loop: Promise<void> | undefined;
  return {
    signal: stopping.signal,
    start(body) {
      if (loop) return false;
      loop = body(stopping.signal);
      return true;
    },
    // The only rejection of `sleep` is the abort, which here just ends the wait.
    pause: (ms) => sleep(ms, stopping.signal).catch(() => {}),
    async stop() {
      shutdown.signal.removeEventListener("abort", onShutdown);
      stopping.abort();
      await loop;
    },
  };
}
