/**
 * A small in-process cache of async values for the read API: each key's value lives `ttlMs`, concurrent
 * readers of a missing key share one load (so a burst of requests makes one RPC call or one query), a
 * failed load is not kept, and the oldest entries are dropped past `maxEntries`.
 */
export type TtlCache<K, V> = {
  /** The cached value of `key`, or the result of `load()` (shared by concurrent callers) cached from now. */
  get(key: K, load: () => Promise<V>): Promise<V>;
  /** Entries currently held (expired ones included until they are touched or evicted). */
  readonly size: number;
  clear(): void;
};

export type TtlCacheOptions = {
  ttlMs: number;
  /**
   * a value older than this (and younger than `ttlMs`) is still served, and read again in the background
   * (once), replacing it when the read succeeds: a key asked for steadily never waits for its load, and no
   * value served is older than `ttlMs` (default: no refresh ahead)
   */
  refreshAheadMs?: number;
  /** default 10,000 */
  maxEntries?: number;
  /** clock in ms (tests) */
  now?: () => number;
};

export function createTtlCache<K, V>(options: TtlCacheOptions): TtlCache<K, V> {
  const { ttlMs, maxEntries = 10_000, now = Date.now } = options;
  const refreshAheadMs = options.refreshAheadMs ?? ttlMs;
  type Entry = { value: Promise<V>; expiresAt: number; refreshAt: number; refreshing?: boolean };
  const entries = new Map<K, Entry>();

  /** Load `key` in the background; the entry it replaces keeps being served until the load succeeds. */
  const refresh = (key: K, entry: Entry, load: () => Promise<V>) => {
    entry.refreshing = true;
    const started = now();
    load().then(
      (value) => {
        if (entries.get(key) !== entry) return;
        entries.set(key, {
          value: Promise.resolve(value),
          expiresAt: started + ttlMs,
          refreshAt: started + refreshAheadMs,
        });
      },
      () => {
        entry.refreshing = false;
      },
    );
  };

  return {
    get(key, load) {
      const entry = entries.get(key);
      const at = now();
      if (entry && entry.expiresAt > at) {
        if (entry.refreshAt <= at && !entry.refreshing) refresh(key, entry, load);
        return entry.value;
      }
      entries.delete(key);
      const value = load();
      // Expiry counts from the load's start, so a slow upstream never makes a value older than `ttlMs`.
      entries.set(key, { value, expiresAt: at + ttlMs, refreshAt: at + refreshAheadMs });
      value.catch(() => {
        if (entries.get(key)?.value === value) entries.delete(key);
      });
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done) break;
        entries.delete(oldest.value);
      }
      return value;
    },
    get size() {
      return entries.size;
    },
    clear() {
      entries.clear();
    },
  };
}
