/**
 * Ordered shutdown (after Ponder `internal/shutdown.ts`): subsystems register their cleanup with `add`;
 * `kill` runs them in reverse order of registration and aborts the shared signal so loops stop.
 */
export type Shutdown = {
  add(fn: () => unknown | Promise<unknown>): void;
  kill(): Promise<void>;
  isKilled(): boolean;
  signal: AbortSignal;
};

export function createShutdown(): Shutdown {
  const callbacks: (() => unknown | Promise<unknown>)[] = [];
  const controller = new AbortController();
  let killing: Promise<void> | undefined;
  return {
    add(fn) {
      callbacks.push(fn);
    },
    kill() {
      killing ??= (async () => {
        controller.abort();
        for (const fn of callbacks.reverse()) {
          try {
            await fn();
          } catch {
            // one failing cleanup must not stop the others
          }
        }
      })();
      return killing;
    },
    isKilled: () => controller.signal.aborted,
    signal: controller.signal,
  };
}
