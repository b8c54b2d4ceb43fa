import { createHash } from "node:crypto";
import type { Config } from "../config/schema.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import type { PriceEngine } from "../prices/createPriceEngine.ts";
import type { Price } from "../prices/price.ts";
import type { Db } from "../store/createDatabase.ts";
import {
  getWindowFigures,
  pruneVolumes,
  resetVolumesOfOtherConfigs,
  valuePendingVolumes,
} from "../store/transactionVolumes.ts";
import { getHolderBalances, getNewestBlockTime } from "../store/usdStatsReads.ts";
import { protocolAddresses } from "./protocolAddresses.ts";
import { sumTvl } from "./sumTvl.ts";

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
/** Transactions valued per statement; the event loop gets a turn between batches (PGlite runs in-process). */
const VALUE_BATCH = 1000;
/** Batches per computation at most; the rest is valued by the next ones. */
const MAX_BATCHES = 10;
/** How often rows that left the window are deleted. */
const PRUNE_EVERY_MS = 10 * 60 * 1000;

/** A protocol's USD figures (SPEC §7). */
export type ProtocolUsd = { tvl: number; dailyVolume: number };

/** The USD statistics at one moment: every configured protocol's, and the global last-24-hours figures. */
export type UsdFigures = {
  /** when they were computed */
  at: Date;
  /** the trailing-24-hours window: [since, until] on block timestamps */
  since: Date;
  until: Date;
  /** by protocol id, every configured protocol */
  protocols: Map<string, ProtocolUsd>;
  /** stored transactions in the window, and the sum of the protocols' `dailyVolume` */
  last24h: { transactions: number; volumeUsd: number };
};

/** The USD side of protocol stats, the overview and `/api/stats` (SPEC §4 rows 8, 10, 11; §7). */
export type UsdStats = {
  /**
   * The latest figures: computed at most every `maxAgeMs`; an expired value is served while the next one is
   * computed (once, shared by every caller), so a request never waits for it except the very first.
   */
  figures(): Promise<UsdFigures>;
};

export type UsdStatsDeps = {
  db: Db;
  prices: PriceEngine;
  /** the clock (tests move it); default the system clock */
  now?: () => Date;
  /** how long figures are served before they are computed again (default 5 s; 0: every call computes) */
  maxAgeMs?: number;
  /**
   * While it returns true (this process's indexer is catching up, indexer/catchingUp.ts), computations value
   * no pending transaction: their volume counts 0 until a computation after the backfill values them.
   */
  deferValuation?: () => boolean;
};

/**
 * The USD statistics (docs/prices.md "Statistics"). `tvl` from the balance cache of each protocol's
 * `tvlAddresses` (key reads) x the price engine's prices. `dailyVolume`: every recent stored transaction is
 * valued once, with the prices of that moment, by the SPEC §7 rule (`valuePendingVolumes`), and the window is
 * summed from per-hour totals the database keeps (`getWindowFigures`): a computation reads at most 25 rows
 * per protocol plus the transactions stored since the last one.
 *
 * While the indexer catches up (`deferValuation`), transactions are counted but not valued: a first start
 * through 20,000 recent transactions spent 3.1 s of PGlite's one thread valuing them, each computation
 * (one per 5 s that /api/stats was polled) 1,000-10,000 rows, between the backfill's commits. A backfill
 * reaches the last 24 hours only at its end (older transactions get no volume row), and the computations
 * after it value what waits, at most 10,000 transactions each.
 *
 * The window ends at the later of the clock and the newest stored block's time: on a live chain that is the
 * clock, and the window keeps sliding when the chain or the indexer stalls; on a dev chain whose time was
 * moved ahead (`evm_increaseTime`) it is the chain's own time, so old transactions leave the window as the
 * chain says they should.
 */
export function createUsdStats(common: Common, deps: UsdStatsDeps): UsdStats {
  const logger = common.logger.child({ module: "stats" });
  const { config } = common;
  const now = deps.now ?? (() => new Date());
  const maxAgeMs = deps.maxAgeMs ?? 5000;
  const tokens = config.tokens.map((t) => t.address as string);
  const tvlHolders = [...new Set(config.protocols.flatMap((p) => p.tvlAddresses as string[]))];
  const owned = config.protocols.flatMap((p) =>
    protocolAddresses(p).map((address) => ({ protocol: p.id, address })),
  );
  const configHash = volumeConfigHash(config);

  let current: { figures: UsdFigures; computedAt: number } | undefined;
  let computing: Promise<UsdFigures> | undefined;
  let configChecked = false;
  let prunedAt = Number.NEGATIVE_INFINITY;

  /** Value the window's pending transactions with the current prices (idempotent across processes). */
  async function valuePending(since: Date, prices: Map<string, Price | null>): Promise<void> {
    const usdPerUnit = config.tokens.flatMap((t) => {
      const price = prices.get(t.address);
      return price ? [{ token: t.address as string, usd: price.usd / 10 ** t.decimals }] : [];
    });
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const valued = await valuePendingVolumes(deps.db, {
        since,
        limit: VALUE_BATCH,
        protocolAddresses: owned,
        usdPerUnit,
        configHash,
        valuedAt: now(),
      });
      if (valued < VALUE_BATCH) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async function compute(): Promise<UsdFigures> {
    const at = now();
    const [prices, newestBlock, balances] = await Promise.all([
      deps.prices.pricesOf(tokens),
      getNewestBlockTime(deps.db),
      getHolderBalances(deps.db, tokens, tvlHolders),
    ]);
    const until = newestBlock && newestBlock > at ? newestBlock : at;
    const since = new Date(until.getTime() - DAY_MS);
    if (!configChecked) {
      const reset = await resetVolumesOfOtherConfigs(deps.db, configHash, since);
      if (reset > 0)
        logger.info({ transactions: reset }, "configuration changed: recent volumes valued again");
      configChecked = true;
    }
    if (at.getTime() - prunedAt >= PRUNE_EVERY_MS) {
      await pruneVolumes(deps.db, new Date(since.getTime() - HOUR_MS));
      prunedAt = at.getTime();
    }
    if (!deps.deferValuation?.()) await valuePending(since, prices);
    const window = await getWindowFigures(deps.db, since);
    const tvl = sumTvl(config.protocols, config.tokens, balances, prices);
    const protocols = new Map(
      config.protocols.map((p) => [
        p.id,
        { tvl: tvl.get(p.id) ?? 0, dailyVolume: window.get(p.id)?.volumeUsd ?? 0 },
      ]),
    );
    const volumeUsd = [...protocols.values()].reduce((sum, p) => sum + p.dailyVolume, 0);
    const transactions = [...window.values()].reduce((sum, w) => sum + w.transactions, 0);
    return { at, since, until, protocols, last24h: { transactions, volumeUsd } };
  }

  return {
    figures() {
      const clock = now().getTime();
      if (current && clock - current.computedAt < maxAgeMs) return Promise.resolve(current.figures);
      computing ??= compute()
        .then((figures) => {
          current = { figures, computedAt: figures.at.getTime() };
          return figures;
        })
        .finally(() => {
          computing = undefined;
        });
      if (current && maxAgeMs > 0) {
        computing.catch((error: unknown) => {
          logger.warn({ error: errorMessage(error) }, "USD statistics not refreshed; serving the last ones");
        });
        return Promise.resolve(current.figures);
      }
      return computing;
    },
  };
}

/** What a volume depends on besides prices: each protocol's addresses and the tracked tokens' decimals. */
function volumeConfigHash(config: Config): string {
  const shape = {
    protocols: config.protocols.map((p) => [p.id, protocolAddresses(p).sort()]),
    tokens: config.tokens.map((t) => [t.address, t.decimals]).sort(),
  };
  return createHash("sha256").update(JSON.stringify(shape)).digest("hex").slice(0, 16);
}
