type Waiters = { callbacks: Set<() => void>; listener: () => void };

/** The sleeps waiting on each signal, behind one `abort` listener per signal. */
const waiting = new WeakMap<AbortSignal, Waiters>();

/**
 * Call `callback` when `signal` aborts; returns what stops waiting. However many callers wait on one signal
 * (every request held by the rate ceiling waits on the process' shutdown signal), the signal gets one
 * `abort` listener, removed once nobody waits: one listener per caller would trip Node's
 * MaxListenersExceededWarning as soon as eleven requests queue.
 */
function whenAborted(signal: AbortSignal, callback: () => void): () => void {
  let entry = waiting.get(signal);
  if (!entry) {
    const callbacks = new Set<() => void>();
    const listener = () => {
      waiting.delete(signal);
      for (const fn of [...callbacks]) fn();
    };
    entry = { callbacks, listener };
    waiting.set(signal, entry);
    signal.addEventListener("abort", listener, { once: true });
  }
  const { callbacks, listener } = entry;
  callbacks.add(callback);
  return () => {
    if (!callbacks.delete(callback) || callbacks.size > 0) return;
    signal.removeEventListener("abort", listener);
    if (waiting.get(signal)?.listener === listener) waiting.delete(signal);
  };
}

/**
 * Wait `ms` milliseconds, or reject with the signal's reason as soon as it aborts (shutdown must not
 * wait out a backoff or a rate-limit pause).
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let forget = () => {};
    const timer = setTimeout(() => {
      forget();
      resolve();
    }, ms);
    if (signal) {
      forget = whenAborted(signal, () => {
        clearTimeout(timer);
        forget();
        reject(signal.reason);
      });
    }
  });
}
