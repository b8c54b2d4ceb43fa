/**
 * Answers `load(key)` calls made during one turn of the event loop with one `loadMany(keys)` call (the keys
 * deduplicated, at most `maxBatch` per call), as DataLoader does; with `maxInFlight`, at most that many calls
 * run at once and the keys that arrive meanwhile gather into the next one.
 *
 * Why: a read the cache cannot serve (`GET /api/tx/:hash` with a hash nobody asked for yet) costs a few
 * statements whatever the number of keys (a summary query, a `pricesAt`). Fifty concurrent requests were fifty
 * times those statements, one after another on PGlite's one connection: latency grew with the queue. Batched,
 * the requests that arrive together share them.
 *
 * Why `maxInFlight`: on one connection, a batch sent while another runs only queues its statements between
 * the other's, so each one's few statements wait for all the others'. Sent one at a time instead, the keys
 * that arrive while a batch runs make the next batch, which grows with the load: under 50 concurrent cold
 * reads on PGlite, batches went from about 20 hashes to about 35, the statements per request fell by as much,
 * and req/s rose by a third (docs/performance.md, "The 2026-11-27 fourth session").
 *
 * A batch's slot is freed, and the next batch sent, as soon as its `loadMany` settles; its callers hear their
 * answers in the turn after. Answered first, they wrote all their responses before the next batch's first
 * statement was posted, and PGlite's thread idled meanwhile: under 50 concurrent cold reads, the median of nine
 * alternated runs each went from 2,221 to 2,496 req/s and its p99 from 47 to 39 ms (docs/performance.md, "The
 * 2026-11-28 fifth session").
 *
 * A batch is ready from `setImmediate` after its first key: after the requests read from the sockets in that
 * turn were routed. A full batch (`maxBatch` keys) is ready at once. A key `loadMany` leaves out of its map
 * resolves to undefined; when it throws, every call of that batch rejects with its error.
 */
export type BatchLoader<K, V> = (key: K) => Promise<V | undefined>;

export function createBatchLoader<K, V>(
  loadMany: (keys: readonly K[]) => Promise<ReadonlyMap<K, V>>,
  options: { maxBatch: number; maxInFlight?: number },
): BatchLoader<K, V> {
  const { maxBatch, maxInFlight = Number.POSITIVE_INFINITY } = options;
  if (!Number.isInteger(maxBatch) || maxBatch < 1) {
    throw new RangeError(`maxBatch must be a positive integer, got ${maxBatch}`);
  }
  if (maxInFlight !== Number.POSITIVE_INFINITY && (!Number.isInteger(maxInFlight) || maxInFlight < 1)) {
    throw new RangeError(`maxInFlight must be a positive integer, got ${maxInFlight}`);
  }
  type Waiter = { resolve: (value: V | undefined) => void; reject: (error: unknown) => void };
  type Batch = Map<K, Waiter[]>;
  /** the batch keys are added to; `open` until its turn has ended */
  let gathering: { keys: Batch; open: boolean } | null = null;
  /** full batches waiting for a free slot, oldest first */
  const full: Batch[] = [];
  let inFlight = 0;

  const send = (batch: Batch) => {
    inFlight++;
    // A loadMany that throws before returning its promise fails its batch like one that rejects: else its
    // callers would wait forever and its slot stay taken.
    let loading: Promise<ReadonlyMap<K, V>>;
    try {
      loading = loadMany([...batch.keys()]);
    } catch (error) {
      loading = Promise.reject(error);
    }
    // The slot is freed, and the next batch sent, before this batch's callers hear their answers, which
    // they do in the next turn: the next batch's statements reach the database while this batch's callers
    // write their responses, instead of after them.
    const settle = (answer: () => void) => {
      inFlight--;
      drain();
      setImmediate(answer);
    };
    loading.then(
      (found) =>
        settle(() => {
          for (const [key, waiters] of batch) for (const w of waiters) w.resolve(found.get(key));
        }),
      (error: unknown) =>
        settle(() => {
          for (const waiters of batch.values()) for (const w of waiters) w.reject(error);
        }),
    );
  };
  /** Send what is ready while slots are free: full batches first, then the gathering one once its turn ended. */
  const drain = () => {
    while (inFlight < maxInFlight) {
      const next = full.shift();
      if (next) send(next);
      else if (gathering && !gathering.open) {
        const { keys } = gathering;
        gathering = null;
        send(keys);
      } else return;
    }
  };

  return (key) =>
    new Promise<V | undefined>((resolve, reject) => {
      if (gathering === null) {
        const started = { keys: new Map() as Batch, open: true };
        gathering = started;
        setImmediate(() => {
          started.open = false;
          drain();
        });
      }
      const batch = gathering.keys;
      const waiters = batch.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else batch.set(key, [{ resolve, reject }]);
      if (batch.size >= maxBatch) {
        full.push(batch);
        gathering = null;
        drain();
      }
    });
}
