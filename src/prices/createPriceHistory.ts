/**
 * Price history (SPEC §10.1): the price of a token at a past time, in the tier order of §6.
 *
 * Interface (stable; other modules rely on it):
 *
 *   const history = createPriceHistory(common, { db, chain });
 *   await history.priceAt(token, time, blockNumber?)        // Price | null
 *   await history.pricesAt([{ token, time, blockNumber? }])  // (Price | null)[], in the questions' order
 *
 * `token` any case; `time` the moment asked about (a transaction's block time); `blockNumber`, when known
 * (a stored transaction's block), bounds the dex tier's pool state exactly, without it the last stored block
 * at or before `time` does. `Price` is `{usd, source: "api" | "dex" | "static", at}`. `pricesAt` answers any
 * number of questions with a few statements (one per tier and per level of quote tokens), so a page of
 * transactions or a CSV chunk is priced in one call. `transferValueUsd` (prices/transactionValues.ts) turns
 * an amount and a price into USD.
 */
import { erc20Abi, parseUnits } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { TokenConfig } from "../config/schema.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import type { ChangeNotices } from "../store/changeNotices.ts";
import type { Db } from "../store/createDatabase.ts";
import {
  getRecordedPricesAt,
  getRecordedSpans,
  getSyncReservesAt,
  type RecordedSpan,
} from "../store/priceHistoryReads.ts";
import { poolPrice } from "./dexTier.ts";
import { MAX_API_PRICE_AGE_MS, type Price } from "./price.ts";
import { staticPrice } from "./staticTier.ts";

/** One question: the price of `token` at `time` (at the state after `blockNumber`, when given). */
export type PriceQuery = { token: string; time: Date; blockNumber?: number | undefined };

export type PriceHistory = {
  /** The token's price at `time`: api point at most 1 hour older, else dex at that block, else static, else null. */
  priceAt(token: string, time: Date, blockNumber?: number): Promise<Price | null>;
  /** The answers to many questions, in their order; a few statements whatever their number. */
  pricesAt(queries: readonly PriceQuery[]): Promise<(Price | null)[]>;
};

export type PriceHistoryDeps = {
  db: Db;
  /** reads the `decimals` of a quote token that is not tracked (once per token); without it, no dex price */
  chain?: ChainClient;
  /**
   * the change notices of the database (`listenForChanges`): with them, each token's span of recorded points
   * is kept until `price_history` changes, and questions outside it are not asked (see `recorded`)
   */
  changes?: ChangeNotices | undefined;
};

/** The api tier's answer depends on the token and the time only. */
const apiKey = (q: PriceQuery) => `${q.token}|${q.time.getTime()}`;

/** A question with the tokens already on its quote path (a quote on it would close a cycle: no dex price). */
type Question = PriceQuery & { token: string; path: ReadonlySet<string> };

/**
 * The price history of the tracked tokens (SPEC §10.1), read from the store:
 * 1. **api**: the last recorded api point (the engine's lookups and the hourly backfill) at or before `time`,
 *    at most 1 hour older than it;
 * 2. **dex**: when the token's `price.pool` is an exclusive configured contract, the reserves of its last
 *    stored `Sync` log at or before the block, by the same formula and `minQuoteLiquidity` rule as §6, times
 *    the quote token's price at the same time (asked the same way); when the pool's logs are not stored,
 *    the last dex price the engine recorded at most 1 hour before;
 * 3. **static**: the configured `usd`.
 * A quote that depends on the token itself (pools quoted in each other) gives no dex price, as in the engine.
 * A failing read is logged and that tier is skipped; nothing throws.
 */
export function createPriceHistory(common: Common, deps: PriceHistoryDeps): PriceHistory {
  const logger = common.logger.child({ module: "prices", part: "history" });
  const tracked = new Map<string, TokenConfig>(common.config.tokens.map((t) => [t.address, t]));
  const exclusiveContracts = new Set(
    common.config.protocols.flatMap((p) => p.contracts.filter((c) => c.exclusive).map((c) => c.address)),
  );
  const decimalsRead = new Map<string, Promise<number | null>>();

  function quoteDecimals(quote: string): Promise<number | null> {
    const known = tracked.get(quote)?.decimals;
    if (known !== undefined) return Promise.resolve(known);
    let read = decimalsRead.get(quote);
    if (!read) {
      const chain = deps.chain;
      read = chain
        ? chain.client
            .readContract({ address: quote as `0x${string}`, abi: erc20Abi, functionName: "decimals" })
            .then(Number)
            .catch((error: unknown) => {
              decimalsRead.delete(quote);
              logger.warn({ quote, error: errorMessage(error) }, "quote decimals not read");
              return null;
            })
        : Promise.resolve(null);
      decimalsRead.set(quote, read);
    }
    return read;
  }

  /** Per tier, each token's span of recorded points (null: none), while the change notices are heard. */
  const spans = { api: new Map<string, RecordedSpan | null>(), dex: new Map<string, RecordedSpan | null>() };
  /** Counts the emptyings of `spans`: a span read before one is not kept. */
  let spansEmptied = 0;
  deps.changes?.subscribe((notice) => {
    if (notice !== "*" && notice !== "price_history") return;
    spansEmptied++;
    spans.api.clear();
    spans.dex.clear();
  });

  /**
   * Whether each question may have a recorded point of `source`: from its token's first point to the
   * maximum age after its last. Without the change notices (or while they are not heard), every question may.
   */
  async function mayBeRecorded(questions: readonly Question[], source: "api" | "dex"): Promise<boolean[]> {
    const notices = deps.changes;
    if (!notices?.listening()) return questions.map(() => true);
    const kept = spans[source];
    const emptied = spansEmptied;
    const unknown = [...new Set(questions.map((q) => q.token))].filter((token) => !kept.has(token));
    const read = await getRecordedSpans(deps.db, source, unknown);
    if (emptied === spansEmptied) for (const token of unknown) kept.set(token, read.get(token) ?? null);
    return questions.map((q) => {
      const span = kept.has(q.token) ? kept.get(q.token) : read.get(q.token);
      return (
        span != null &&
        q.time.getTime() >= span.first.getTime() &&
        q.time.getTime() - MAX_API_PRICE_AGE_MS <= span.last.getTime()
      );
    });
  }

  /**
   * The last recorded point of `source` for each question, at most `MAX_API_PRICE_AGE_MS` old.
   *
   * Questions outside their token's span of points are answered null without a statement: on a chain whose
   * tokens have no api points (no price API, or blocks older than its history), a batch of cold
   * `GET /api/tx/:hash` reads skipped its api statement, a quarter of its work on PGlite's thread (bench:api
   * txCold: 20-25% more req/s; docs/performance.md, "The 2026-11-27 fourth session"). The spans are read once per
   * token and kept until a write to `price_history` is heard, like the API's cached bodies.
   */
  async function recorded(questions: readonly Question[], source: "api" | "dex"): Promise<(Price | null)[]> {
    if (questions.length === 0) return [];
    try {
      const may = await mayBeRecorded(questions, source);
      const asked = questions.filter((_q, i) => may[i]);
      const answers: (Price | null)[] = questions.map(() => null);
      if (asked.length === 0) return answers;
      const points = await getRecordedPricesAt(
        deps.db,
        asked.map((q) => ({ token: q.token, source, at: q.time })),
        MAX_API_PRICE_AGE_MS,
      );
      let k = 0;
      questions.forEach((_q, i) => {
        if (!may[i]) return;
        const p = points[k++];
        answers[i] = p && p.priceUsd > 0 ? { usd: p.priceUsd, source, at: p.time } : null;
      });
      return answers;
    } catch (error) {
      logger.warn({ source, error: errorMessage(error) }, "recorded prices not read");
      return questions.map(() => null);
    }
  }

  /**
   * Tier dex from stored `Sync` logs, for questions whose token's pool is an exclusive contract. `apiKnown`:
   * the api tier's answers read so far (their quotes' among them), by `apiKey`.
   */
  async function fromSyncs(
    questions: readonly Question[],
    apiKnown: Map<string, Price | null>,
  ): Promise<(Price | null)[]> {
    if (questions.length === 0) return [];
    let reserves: Awaited<ReturnType<typeof getSyncReservesAt>>;
    try {
      reserves = await getSyncReservesAt(
        deps.db,
        questions.map((q) => ({
          pool: tracked.get(q.token)!.price!.pool!,
          blockNumber: q.blockNumber,
          at: q.time,
        })),
      );
    } catch (error) {
      logger.warn({ error: errorMessage(error) }, "pool reserves not read");
      return questions.map(() => null);
    }
    // The quotes at the same times, asked together (one level of the quote chain per call).
    const withReserves = questions.flatMap((q, i) => {
      const quote = tracked.get(q.token)!.price!.quote!;
      return reserves[i] && quote !== q.token && !q.path.has(quote) ? [{ i, q, quote }] : [];
    });
    const quotePrices = await resolve(
      withReserves.map(({ q, quote }) => ({
        token: quote,
        time: q.time,
        blockNumber: q.blockNumber,
        path: new Set([...q.path, q.token]),
      })),
      apiKnown,
    );
    const answers: (Price | null)[] = questions.map(() => null);
    await Promise.all(
      withReserves.map(async ({ i, q, quote }, k) => {
        const quotePrice = quotePrices[k];
        const reading = reserves[i];
        const config = tracked.get(q.token)!;
        const decimals = await quoteDecimals(quote);
        if (!quotePrice || !reading || decimals === null) return;
        const tokenIsToken0 = q.token < quote; // Uniswap V2 orders a pair's tokens by address
        const min = config.price?.minQuoteLiquidity;
        const dex = poolPrice(
          {
            tokenReserve: tokenIsToken0 ? reading.reserve0 : reading.reserve1,
            quoteReserve: tokenIsToken0 ? reading.reserve1 : reading.reserve0,
            tokenDecimals: config.decimals,
            quoteDecimals: decimals,
            minQuoteReserve: min === undefined ? 0n : parseUnits(min, decimals),
          },
          quotePrice.usd,
        );
        if ("usd" in dex) answers[i] = { usd: dex.usd, source: "dex", at: q.time };
      }),
    );
    return answers;
  }

  /** The quote a dex price of `q` from stored `Sync` logs would need, when it may have one. */
  function syncQuote(q: Question): Question | null {
    const price = tracked.get(q.token)?.price;
    if (price?.pool === undefined || price.quote === undefined || !exclusiveContracts.has(price.pool))
      return null;
    if (price.quote === q.token || q.path.has(price.quote)) return null;
    return { token: price.quote, time: q.time, blockNumber: q.blockNumber, path: q.path };
  }

  /**
   * Every tier for every question: the first that answers wins. `apiKnown` (by `apiKey`): api answers read
   * before, not asked again.
   *
   * The api tier is asked in one statement for the questions and, at the same times, for the quote tokens
   * their `Sync`-priced dex tier would need: a question the api tier cannot answer then costs one statement
   * more (the reserves) instead of two, one after another. A cold `GET /api/tx/:hash` batch went from four
   * statements to three (docs/performance.md, "The 2026-11-27 fourth session"). When the api tier answers,
   * the quotes' seeks were wasted: a few index seeks, against a statement's round trip.
   */
  async function resolve(
    questions: readonly Question[],
    apiKnown = new Map<string, Price | null>(),
  ): Promise<(Price | null)[]> {
    if (questions.length === 0) return [];
    const unasked = new Map<string, Question>();
    for (const q of questions) {
      for (const asked of [q, syncQuote(q)]) {
        if (asked && !apiKnown.has(apiKey(asked))) unasked.set(apiKey(asked), asked);
      }
    }
    const read = await recorded([...unasked.values()], "api");
    let k = 0;
    for (const key of unasked.keys()) apiKnown.set(key, read[k++] ?? null);
    const answers = questions.map((q) => apiKnown.get(apiKey(q)) ?? null);
    const pending = questions.flatMap((_q, i) => (answers[i] ? [] : [i]));
    const bySyncs: number[] = [];
    const byRecordedDex: number[] = [];
    for (const i of pending) {
      const price = tracked.get(questions[i]!.token)?.price;
      if (price?.pool === undefined || price.quote === undefined) continue;
      (exclusiveContracts.has(price.pool) ? bySyncs : byRecordedDex).push(i);
    }
    const [syncPrices, dexPoints] = await Promise.all([
      fromSyncs(
        bySyncs.map((i) => questions[i]!),
        apiKnown,
      ),
      recorded(
        byRecordedDex.map((i) => questions[i]!),
        "dex",
      ),
    ]);
    bySyncs.forEach((i, k) => {
      answers[i] = syncPrices[k] ?? null;
    });
    byRecordedDex.forEach((i, k) => {
      answers[i] = dexPoints[k] ?? null;
    });
    return questions.map((q, i) => answers[i] ?? staticPrice(tracked.get(q.token), q.time));
  }

  async function pricesAt(queries: readonly PriceQuery[]): Promise<(Price | null)[]> {
    // The same question asked twice (transfers of one token in one block) is answered once.
    const keys = queries.map((q) => `${q.token.toLowerCase()}|${q.time.getTime()}|${q.blockNumber ?? ""}`);
    const unique = new Map<string, Question>();
    queries.forEach((q, i) => {
      if (!unique.has(keys[i]!))
        unique.set(keys[i]!, { ...q, token: q.token.toLowerCase(), path: new Set() });
    });
    const questions = [...unique.values()];
    const answers = await resolve(questions);
    const byKey = new Map([...unique.keys()].map((key, i) => [key, answers[i] ?? null]));
    return keys.map((key) => byKey.get(key) ?? null);
  }

  return {
    async priceAt(token, time, blockNumber) {
      const [price] = await pricesAt([{ token, time, blockNumber }]);
      return price ?? null;
    },
    pricesAt,
  };
}
