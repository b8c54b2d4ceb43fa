import type { ChainClient } from "../chain/createChainClient.ts";
import { tokensByAddress } from "../config/tokensByAddress.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import type { Db } from "../store/createDatabase.ts";
import { getLatestPricePoints, insertPricePoints } from "../store/priceHistoryReads.ts";
import { getStoredPrices, type PriceRow, upsertPrices } from "../store/priceStore.ts";
import { type ApiTier, createApiTier } from "./createApiTier.ts";
import { type PoolReading, poolPrice, readPool } from "./dexTier.ts";
import { MAX_API_PRICE_AGE_MS, PRICE_SOURCES, type Price, type PriceSource } from "./price.ts";
import { staticPrice } from "./staticTier.ts";

export type { Price, PriceSource };

/**
 * USD prices of tokens (SPEC §6): tier `api` (the configured price API), then `dex` (the token's configured
 * pool x the quote token's price), then `static` (the configured value); null when no tier answers.
 */
export type PriceEngine = {
  /** The token's price (any case), from the cache when it is younger than `prices.cacheSeconds`. */
  priceOf(token: string): Promise<Price | null>;
  /** Prices of several tokens, keyed by lowercase address; the misses are looked up together (batched). */
  pricesOf(tokens: readonly string[]): Promise<Map<string, Price | null>>;
  /**
   * Look every tracked token up again now, whatever this process's cache holds; a price another process
   * stored less than half of `cacheSeconds` ago is taken as is. The indexer's periodic refresh.
   */
  refreshAll(): Promise<Map<string, Price | null>>;
};

export type PriceEngineDeps = {
  chain: ChainClient;
  db: Db;
  /** the clock (tests move it); default the system clock */
  now?: () => Date;
  /** per price API call (default 5 s) */
  apiTimeoutMs?: number;
};

type Entry = { price: Price | null; fetchedAt: number };

/** One lookup in flight: settled once, with a price or null. */
type Claim = {
  force: boolean;
  promise: Promise<Price | null>;
  settled: boolean;
  settle(entry: Entry): void;
};

/**
 * An unchanged price is recorded again once its latest point is this old: a recorded api (or dex) point answers
 * for at most `MAX_API_PRICE_AGE_MS` after its time, so with a refresh shorter than the rest of that hour a
 * newer point always lands before the older one stops answering.
 */
export const POINT_REPEAT_MS = MAX_API_PRICE_AGE_MS / 2;

/** Memory entries kept at most; tracked tokens and their quotes are far fewer. */
const MAX_ENTRIES = 10_000;

/**
 * The price engine (SPEC §6). How it keeps upstream calls down:
 *
 * - **Cache.** A lookup's result (a price, or null) is kept in memory for `prices.cacheSeconds`, and every
 *   price found is written to the `prices` table with the time it was fetched, and recorded in the price
 *   history with its tier and time (SPEC §10.1). A miss in memory reads the
 *   table first: a price another replica (or the indexer's refresh) fetched less than `cacheSeconds` ago is
 *   used without asking anyone.
 * - **One lookup per token in flight.** A token being looked up is joined, not looked up again.
 * - **Batches.** Misses requested in the same tick are looked up together: one table read, the api tier's
 *   calls chunked as the provider allows (30 tokens -> 2 Alchemy calls), pools read in parallel.
 * - **Quotes.** A token the api tier did not price and that has a pool needs its quote's price, looked up
 *   through the engine like any other (cache, in-flight lookup, or the next batch). Waiting on a quote is
 *   an edge of a wait-for graph; a wait that would close a cycle (pools quoted in each other, directly or
 *   through other tokens, in one batch or across concurrent ones) is refused: that token gets no dex price
 *   and falls to its static one. So lookups never deadlock.
 * - **Failures.** Every tier and the table are best effort: a failure is logged and the next tier answers.
 *   No lookup throws.
 */
export function createPriceEngine(common: Common, deps: PriceEngineDeps): PriceEngine {
  const logger = common.logger.child({ module: "prices" });
  const now = deps.now ?? (() => new Date());
  const ttlMs = common.config.prices.cacheSeconds * 1000;
  const tracked = tokensByAddress(common.config);
  const apiTier: ApiTier | null = createApiTier(common, {
    now,
    ...(deps.apiTimeoutMs === undefined ? {} : { timeoutMs: deps.apiTimeoutMs }),
  });

  const memory = new Map<string, Entry>();
  /** tokens being looked up */
  const inflight = new Map<string, Claim>();
  /** token -> the quote tokens its lookup is waiting for */
  const waitsFor = new Map<string, Set<string>>();
  /** claimed tokens waiting for the next batch */
  let queue = new Map<string, Claim>();
  let scheduled = false;

  /** The cached result when younger than the TTL, else undefined (a cached null is a result too). */
  function fresh(token: string): Price | null | undefined {
    const entry = memory.get(token);
    if (!entry || now().getTime() - entry.fetchedAt >= ttlMs) return undefined;
    return entry.price;
  }

  function remember(token: string, entry: Entry): void {
    memory.delete(token);
    memory.set(token, entry);
    while (memory.size > MAX_ENTRIES) {
      const oldest = memory.keys().next();
      if (oldest.done) break;
      memory.delete(oldest.value);
    }
  }

  /** Mark `token` in flight, queued for the next batch; its promise settles when its price is known. */
  function claim(token: string, force: boolean): Promise<Price | null> {
    let resolve!: (price: Price | null) => void;
    const promise = new Promise<Price | null>((r) => {
      resolve = r;
    });
    const claimed: Claim = {
      force,
      promise,
      settled: false,
      settle(entry) {
        if (claimed.settled) return;
        claimed.settled = true;
        remember(token, entry);
        if (inflight.get(token) === claimed) inflight.delete(token);
        resolve(entry.price);
      },
    };
    inflight.set(token, claimed);
    queue.set(token, claimed);
    if (!scheduled) {
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        const batch = queue;
        queue = new Map();
        void runBatch(batch);
      });
    }
    return promise;
  }

  /** A cached price, the lookup in flight, or a new one queued for the next batch. */
  function lookupOne(token: string, force: boolean): Promise<Price | null> | Price | null {
    const hit = force ? undefined : fresh(token);
    if (hit !== undefined) {
      common.metrics.priceLookups.inc({ tier: "memory" });
      return hit;
    }
    return inflight.get(token)?.promise ?? claim(token, force);
  }

  async function lookup(tokens: readonly string[], force: boolean): Promise<Map<string, Price | null>> {
    const unique = [...new Set(tokens.map((t) => t.toLowerCase()))];
    const prices = await Promise.all(unique.map((t) => lookupOne(t, force)));
    return new Map(unique.map((t, i) => [t, prices[i] ?? null]));
  }

  /** Whether `from`'s lookup waits, directly or through other lookups, for `to`'s. */
  function reaches(from: string, to: string): boolean {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length > 0) {
      const token = stack.pop()!;
      if (token === to) return true;
      if (seen.has(token)) continue;
      seen.add(token);
      for (const next of waitsFor.get(token) ?? []) stack.push(next);
    }
    return false;
  }

  /** The quote's price for `token`'s pool, or null when waiting for it would close a cycle. */
  async function quotePriceFor(token: string, quote: string): Promise<Price | null> {
    const hit = fresh(quote);
    if (hit !== undefined) return hit;
    if (quote === token || reaches(quote, token)) {
      logger.debug({ token, quote }, "no dex price: the quote's price depends on this token's");
      return null;
    }
    const edges = waitsFor.get(token) ?? new Set<string>();
    waitsFor.set(token, edges);
    edges.add(quote);
    try {
      return await lookupOne(quote, false);
    } finally {
      edges.delete(quote);
      if (edges.size === 0) waitsFor.delete(token);
    }
  }

  /** Look up every token of a batch; every one is settled, whatever fails. */
  async function runBatch(batch: Map<string, Claim>): Promise<void> {
    try {
      await resolveBatch(batch);
    } catch (error) {
      logger.error({ error: errorMessage(error) }, "price lookup failed");
    }
    const at = now().getTime();
    for (const claimed of batch.values()) claimed.settle({ price: null, fetchedAt: at });
  }

  /**
   * Record the resolved prices in the price history (SPEC §10.1), skipping each one that the token's latest
   * point of the same tier already states: same price, not older than `POINT_REPEAT_MS` for a tier read with an
   * age limit (api, recorded dex), any age for `static` (never read from the history). A skipped price changes
   * no answer of the history while the refresh runs, and writes nothing: no row, and no statement, whose
   * triggers would empty the caches of transaction values and history volumes.
   */
  async function recordPoints(rows: readonly PriceRow[]): Promise<void> {
    const latest = await getLatestPricePoints(
      deps.db,
      rows.map((r) => ({ token: r.tokenAddress, source: r.source })),
    );
    const changed = rows.filter((r) => {
      const last = latest.get(`${r.tokenAddress.toLowerCase()}|${r.source}`);
      if (!last || last.priceUsd !== r.priceUsd) return true;
      const age = r.priceAt.getTime() - last.time.getTime();
      if (age < 0) return true;
      return r.source !== "static" && age >= POINT_REPEAT_MS;
    });
    await insertPricePoints(
      deps.db,
      changed.map((r) => ({
        tokenAddress: r.tokenAddress,
        source: r.source,
        time: r.priceAt,
        priceUsd: r.priceUsd,
        origin: "engine",
      })),
    );
  }

  /** Store the prices just found (best effort), then hand them to their waiters. */
  async function storeAndSettle(batch: Map<string, Claim>, found: [string, Price | null][]) {
    const fetchedAt = now();
    const rows: PriceRow[] = [];
    for (const [token, price] of found) {
      if (price) {
        rows.push({
          tokenAddress: token,
          priceUsd: price.usd,
          source: price.source,
          priceAt: price.at,
          fetchedAt,
        });
      }
    }
    if (rows.length > 0) {
      try {
        // The current price, and the same point in the history (SPEC §10.1), unless the history's latest point
        // of that token and tier already states it (docs/prices.md "Price history").
        await Promise.all([upsertPrices(deps.db, rows), recordPoints(rows)]);
      } catch (error) {
        logger.warn({ error: errorMessage(error) }, "prices not stored");
      }
    }
    for (const [token, price] of found) batch.get(token)?.settle({ price, fetchedAt: fetchedAt.getTime() });
  }

  async function resolveBatch(batch: Map<string, Claim>): Promise<void> {
    // 1. The shared table: a price fetched recently enough by any process is taken as is. A forced lookup
    //    (the refresh) takes only one that another process fetched after this one, in the last half TTL.
    const startedAt = now().getTime();
    const stored = await readStored([...batch.keys()]);
    const pending: string[] = [];
    for (const [token, { force }] of batch) {
      const row = stored.get(token);
      const age = row ? startedAt - row.fetchedAt.getTime() : Number.POSITIVE_INFINITY;
      const ours = memory.get(token)?.fetchedAt ?? Number.NEGATIVE_INFINITY;
      const usable = force ? age < ttlMs / 2 && row!.fetchedAt.getTime() > ours : age < ttlMs;
      if (row && usable && isSource(row.source)) {
        const price = { usd: row.priceUsd, source: row.source, at: row.priceAt };
        common.metrics.priceLookups.inc({ tier: "stored" });
        batch.get(token)?.settle({ price, fetchedAt: row.fetchedAt.getTime() });
      } else {
        pending.push(token);
      }
    }

    // 2. Tier api, every pending token at once, stored in one statement.
    const apiPrices =
      apiTier && pending.length > 0 ? await apiTier.lookup(pending) : new Map<string, Price>();
    if (apiPrices.size > 0) common.metrics.priceLookups.inc({ tier: "api" }, apiPrices.size);
    await storeAndSettle(batch, [...apiPrices]);
    // 3. The others: their pool x their quote's price, else the static price. In parallel, each stored and
    //    settled as soon as it is known (a token of this batch may be another's quote).
    await Promise.all(
      pending
        .filter((token) => !apiPrices.has(token))
        .map(async (token) => {
          const price = (await dexPrice(token)) ?? staticPrice(tracked.get(token), now());
          common.metrics.priceLookups.inc({ tier: price?.source ?? "none" });
          await storeAndSettle(batch, [[token, price]]);
        }),
    );
  }

  /** Tier dex: the token's pool (read now) x its quote's price; null when it has none or it is refused. */
  async function dexPrice(token: string): Promise<Price | null> {
    const config = tracked.get(token);
    const pool = config?.price?.pool;
    const quote = config?.price?.quote;
    if (!config || pool === undefined || quote === undefined) return null;
    let reading: PoolReading;
    try {
      reading = await readPool(deps.chain, {
        token: config.address,
        tokenDecimals: config.decimals,
        pool,
        quote,
        quoteDecimals: tracked.get(quote)?.decimals,
        minQuoteLiquidity: config.price?.minQuoteLiquidity,
      });
    } catch (error) {
      logger.warn({ token, pool, error: errorMessage(error) }, "pool not read");
      return null;
    }
    const quotePrice = await quotePriceFor(token, quote);
    if (!quotePrice) {
      logger.debug({ token, quote }, "no dex price: the quote token has no price");
      return null;
    }
    const dex = poolPrice(reading, quotePrice.usd);
    if ("refused" in dex) {
      logger.info({ token, pool, reason: dex.refused }, "pool refused");
      return null;
    }
    return { usd: dex.usd, source: "dex", at: now() };
  }

  async function readStored(tokens: string[]): Promise<Map<string, PriceRow>> {
    try {
      const rows = await getStoredPrices(deps.db, tokens);
      return new Map(rows.map((r) => [r.tokenAddress, r]));
    } catch (error) {
      logger.warn({ error: errorMessage(error) }, "stored prices not read");
      return new Map();
    }
  }

  return {
    async priceOf(token) {
      const key = token.toLowerCase();
      return (await lookup([key], false)).get(key) ?? null;
    },
    pricesOf: (tokens) => lookup(tokens, false),
    refreshAll: () => lookup([...tracked.keys()], true),
  };
}

function isSource(source: string): source is PriceSource {
  return (PRICE_SOURCES as readonly string[]).includes(source);
}
