/**
 * Wakes the inbox worker when the webhook route stores a delivery in the same process, so that a delivery is
 * processed at once instead of at the next poll. Processes that only serve the API (or only index) share
 * nothing: there the worker's poll of the table is what picks deliveries up.
 */
export type InboxSignal = {
  /** A delivery was stored. */
  notify(): void;
  /** Resolve on the next `notify()` (or at once if one came since the last wait), after `ms`, or on abort. */
  wait(ms: number, abort: AbortSignal): Promise<void>;
};

export function createInboxSignal(): InboxSignal {
  const waiters = new Set<() => void>();
  let notified = false;
  return {
    notify() {
      if (waiters.size === 0) {
        notified = true;
        return;
      }
      for (const wake of [...waiters]) wake();
    },
    wait(ms, abort) {
      if (notified || abort.aborted) {
        notified = false;
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          abort.removeEventListener("abort", wake);
          waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        abort.addEventListener("abort", wake, { once: true });
        waiters.add(wake);
      });
    },
  };
}
