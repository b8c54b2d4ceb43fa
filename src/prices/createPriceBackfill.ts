import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import type { Db } from "../store/createDatabase.ts";
import {
  type BackfillProgress,
  getBackfillProgress,
  getIndexedSince,
  saveBackfillStep,
} from "../store/priceBackfillState.ts";
import type { ApiQuote } from "./apiQuote.ts";
import { alchemyNetworkOf, defiLlamaChainOf } from "./chainNames.ts";
import { DEFAULT_BASE_URLS } from "./createApiTier.ts";
import { MIN_CONFIDENCE } from "./fetchDefiLlamaPrices.ts";
import { fetchAlchemyHistory, fetchDefiLlamaChart } from "./fetchPriceHistory.ts";

const HOUR_MS = 3_600_000;

/** The api-tier backfill of hourly price history (SPEC §10.1). */
export type PriceBackfill = {
  /** Run steps in the background until every token is covered, then check again every `idleMs`. */
  start(): void;
  /** Stop after the step in flight (its result is kept). Idempotent. */
  stop(): Promise<void>;
  /** One step: fetch one token's next chunk and store it; false when there was nothing left to fetch. */
  step(): Promise<boolean>;
  /**
   * Whether the last step stored a chunk (more may follow): every stored chunk makes the history buckets of its
   * hours stale, so the history valuer waits meanwhile instead of valuing them once per chunk. False once a
   * step finds nothing left, and while the provider fails (the valuer must not wait on an outage).
   */
  filling(): boolean;
};

export type PriceBackfillDeps = {
  db: Db;
  now?: () => Date;
  /** at least this long between two requests to the provider (default 1 s: a bounded request rate) */
  minIntervalMs?: number;
  /** hours per request (default 168: a week, within both providers' limits for hourly data) */
  chunkHours?: number;
  /** the wait before looking for new work once everything is covered (default 10 minutes) */
  idleMs?: number;
  /** per request (default 15 s) */
  timeoutMs?: number;
  /** the wait after a failed request (default 30 s) */
  retryMs?: number;
};

/**
 * Fill hourly api-tier history for the indexed time range, from the earliest stored transaction to now, for
 * every tracked token, from the configured provider's historical endpoint (Alchemy `tokens/historical`,
 * DefiLlama `chart`). Null when `prices.api` is not configured or cannot be used.
 *
 * Each token's coverage `[coveredFrom, coveredTo]` is kept in `price_backfill`: a step first extends it to
 * the present (the newest hours matter most), then back to the start of the indexed range, one chunk per
 * request, storing the points and the new coverage in one database transaction, so that a restart (even
 * after kill -9) resumes where the last committed step ended. Requests are spaced by `minIntervalMs`; a
 * failing request is logged and retried on a later step, after the other tokens had their turn.
 */
export function createPriceBackfill(common: Common, deps: PriceBackfillDeps): PriceBackfill | null {
  const api = common.config.prices.api;
  if (!api) return null;
  const logger = common.logger.child({ module: "prices", part: "backfill", provider: api.kind });
  const now = deps.now ?? (() => new Date());
  const minIntervalMs = deps.minIntervalMs ?? 1000;
  const chunkMs = (deps.chunkHours ?? 168) * HOUR_MS;
  const idleMs = deps.idleMs ?? 10 * 60_000;
  const retryMs = deps.retryMs ?? 30_000;
  let lastFailed = false;
  let lastStored = false;
  /** nothing stored yet: look again soon (a first start), not after `idleMs` */
  let nothingIndexed = false;
  const baseUrl = api.baseUrl ?? DEFAULT_BASE_URLS[api.kind];
  const options = { timeoutMs: deps.timeoutMs ?? 15_000, signal: common.shutdown.signal };

  let fetchRange: (address: string, start: Date, end: Date) => Promise<ApiQuote[]>;
  if (api.kind === "alchemy") {
    const network = api.network ?? alchemyNetworkOf(common.config.chain.id);
    const apiKey = api.apiKey;
    if (apiKey === undefined || apiKey === "" || network === undefined) return null;
    fetchRange = (address, start, end) =>
      fetchAlchemyHistory({ baseUrl, apiKey, network, address, start, end, ...options });
  } else {
    const chain = api.network ?? defiLlamaChainOf(common.config.chain.id) ?? common.config.chain.name;
    fetchRange = (address, start, end) =>
      fetchDefiLlamaChart({ baseUrl, chain, minConfidence: MIN_CONFIDENCE, address, start, end, ...options });
  }

  const tokens = common.config.tokens.map((t) => t.address as string);
  /** tokens whose last request failed: skipped until every other token had its turn */
  const failed = new Set<string>();

  /** The next chunk of `token` to fetch, or null when it is covered. */
  function nextChunk(
    since: Date,
    until: Date,
    progress: BackfillProgress | undefined,
  ): { start: Date; end: Date; progress: BackfillProgress } | null {
    if (!progress) {
      const start = new Date(Math.max(since.getTime(), until.getTime() - chunkMs));
      return { start, end: until, progress: { coveredFrom: start, coveredTo: until } };
    }
    if (progress.coveredTo.getTime() < until.getTime()) {
      const start = progress.coveredTo;
      const end = new Date(Math.min(until.getTime(), start.getTime() + chunkMs));
      return { start, end, progress: { coveredFrom: progress.coveredFrom, coveredTo: end } };
    }
    if (progress.coveredFrom.getTime() > since.getTime()) {
      const end = progress.coveredFrom;
      const start = new Date(Math.max(since.getTime(), end.getTime() - chunkMs));
      return { start, end, progress: { coveredFrom: start, coveredTo: progress.coveredTo } };
    }
    return null;
  }

  async function step(): Promise<boolean> {
    // `lastStored` keeps the last step's answer while this one runs (filling() between two chunks is true).
    lastFailed = false;
    let stored = false;
    try {
      stored = await stepOnce();
    } finally {
      lastStored = stored;
    }
    return stored || lastFailed;
  }

  /** One step; true when it stored a chunk. */
  async function stepOnce(): Promise<boolean> {
    const indexedSince = await getIndexedSince(deps.db);
    nothingIndexed = indexedSince === null;
    if (!indexedSince) return false;
    const since = new Date(Math.floor(indexedSince.getTime() / HOUR_MS) * HOUR_MS);
    const until = new Date(Math.floor(now().getTime() / HOUR_MS) * HOUR_MS);
    const progress = await getBackfillProgress(deps.db, api!.kind);
    const pending = tokens.flatMap((token) => {
      const chunk = nextChunk(since, until, progress.get(token));
      return chunk ? [{ token, ...chunk }] : [];
    });
    const next = pending.find((p) => !failed.has(p.token)) ?? pending[0];
    if (!next) return false;
    if (pending.every((p) => failed.has(p.token))) failed.clear();
    let quotes: ApiQuote[];
    lastFailed = false;
    try {
      quotes = await fetchRange(next.token, next.start, next.end);
    } catch (error) {
      failed.add(next.token);
      lastFailed = true;
      logger.warn(
        { token: next.token, error: errorMessage(error) },
        "price history not fetched; retrying later",
      );
      return false;
    }
    failed.delete(next.token);
    const points = quotes
      .filter((q) => q.usd > 0 && q.at >= next.start && q.at <= next.end)
      .map((q) => ({
        tokenAddress: next.token,
        source: "api",
        time: q.at,
        priceUsd: q.usd,
        origin: "backfill" as const,
      }));
    await saveBackfillStep(deps.db, {
      token: next.token,
      provider: api!.kind,
      points,
      progress: next.progress,
    });
    logger.debug(
      {
        token: next.token,
        from: next.start.toISOString(),
        to: next.end.toISOString(),
        points: points.length,
      },
      "price history fetched",
    );
    return true;
  }

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const loop = () => {
    if (stopped) return;
    const startedAt = Date.now();
    running = step()
      .catch((error: unknown) => {
        logger.warn({ error: errorMessage(error) }, "price backfill step failed");
        return true;
      })
      .then((more) => {
        running = undefined;
        if (stopped) return;
        const wait = !more
          ? nothingIndexed
            ? Math.max(minIntervalMs, 5_000)
            : idleMs
          : lastFailed
            ? Math.max(minIntervalMs, retryMs)
            : minIntervalMs;
        timer = setTimeout(loop, Math.max(0, wait - (Date.now() - startedAt)));
        timer.unref();
      });
  };

  return {
    filling: () => lastStored && !stopped,
    start() {
      if (stopped || running || timer || tokens.length === 0) return;
      loop();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
    step,
  };
}
