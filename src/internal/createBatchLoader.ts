/**
 * Answers `load(key)` calls made during one turn of the event loop with one `loadMany(keys)` call (the keys
 * deduplicated, at most `maxBatch` per call), as DataLoader does.
 *
 * Why: a read the cache cannot serve (`GET /api/tx/:hash` with a hash nobody asked for yet) costs a few
 * statements whatever the number of keys (a summary query, a `pricesAt`). Fifty concurrent requests were fifty
 * times those statements, one after another on PGlite's one connection: latency grew with the queue. Batched,
 * the requests that arrive together share them.
 *
 * The batch is sent from `setImmediate`: after the requests read from the sockets in this turn were routed.
 * A key `loadMany` leaves out of its map resolves to undefined; when it throws, every call of that batch
 * rejects with its error.
 */
export type BatchLoader<K, V> = (key: K) => Promise<V | undefined>;

export function createBatchLoader<K, V>(
  loadMany: (keys: readonly K[]) => Promise<ReadonlyMap<K, V>>,
  options: { maxBatch: number },
): BatchLoader<K, V> {
  if (!Number.isInteger(options.maxBatch) || options.maxBatch < 1) {
    throw new RangeError(`maxBatch must be a positive integer, got ${options.maxBatch}`);
  }
  type Waiter = { resolve: (value: V | undefined) => void; reject: (error: unknown) => void };
  let pending: Map<K, Waiter[]> | null = null;

  const send = (batch: Map<K, Waiter[]>) => {
    loadMany([...batch.keys()]).then(
      (found) => {
        for (const [key, waiters] of batch) for (const w of waiters) w.resolve(found.get(key));
      },
      (error: unknown) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(error);
      },
    );
  };
  const flush = () => {
    const batch = pending;
    pending = null;
    if (batch) send(batch);
  };

  return (key) =>
    new Promise<V | undefined>((resolve, reject) => {
      if (pending === null) {
        pending = new Map();
        setImmediate(flush);
      }
      const waiters = pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else pending.set(key, [{ resolve, reject }]);
      // A full batch goes at once; later keys of this turn start the next one.
      if (pending.size >= options.maxBatch) {
        const full = pending;
        pending = null;
        send(full);
      }
    });
}
