import { createHash } from "node:crypto";
import { formatUnits } from "viem";
import type { Config, ProtocolConfig } from "../config/schema.ts";
import type { Common } from "../internal/common.ts";
import type { PriceHistory } from "../prices/createPriceHistory.ts";
import type { TransactionToValue, TransactionValuer } from "../prices/transactionValues.ts";
import type { Db } from "../store/createDatabase.ts";
import { syncHistoryHolders } from "../store/historyHolders.ts";
import {
  ALL_PROTOCOLS,
  getHistoryBuckets,
  getHolderHours,
  getStaleBuckets,
  getVolumeTransfers,
  type HistoryBucketRow,
  type HistorySpan,
  saveHistoryVolumes,
} from "../store/historyReads.ts";
import { getTokenModes } from "../store/indexerState.ts";
import { bucketStarts, SPAN_MS } from "./historyBuckets.ts";
import { protocolAddresses } from "./protocolAddresses.ts";

export type HistoryPoint = {
  /** the bucket's start */
  time: Date;
  transactionCount: number;
  uniqueUsers: number;
  volumeUsd: number;
  /** protocol history only: TVL at the bucket's end, null when a balance then is not known */
  tvlUsd?: number | null;
};

export type HistoryQuery = {
  /** null: every protocol together (no `tvlUsd`) */
  protocol: ProtocolConfig | null;
  span: HistorySpan;
  from: Date;
  to: Date;
};

/** Protocol and global history (SPEC §10.3, docs/api.md "History"). */
export type TimeSeries = {
  /** every bucket from the one holding `from` to the one holding `to`, ascending, empty ones with zeros */
  points(query: HistoryQuery): Promise<HistoryPoint[]>;
  /**
   * Compute and cache the volumes of up to `limit` buckets that have none valid, newest first: every closed
   * bucket, and the hour in progress (the day in progress, re-valued after each commit, is left to the first
   * request). The writer runs it in the background after commits, so that a request finds them valued.
   * Returns how many buckets were valued; the values are those a request would have computed.
   */
  valueStale(limit?: number): Promise<number>;
};

export type TimeSeriesDeps = {
  db: Db;
  /** prices at past times (SPEC §10.1), for TVL at bucket ends */
  prices: Pick<PriceHistory, "pricesAt">;
  /** SPEC §10.2's transaction values at block time, the same the API serves */
  valueTransactions: TransactionValuer;
  /** the clock (tests move it); default the system clock */
  now?: () => Date;
};

/** Transactions whose transfers one statement reads at most when volumes are computed (a bucket is never split). */
const VOLUME_CHUNK = 5_000;

/**
 * History from the roll-ups the database keeps (migration `history_rollups`): counts and distinct users are
 * read as they are; a bucket's `volumeUsd` is computed from its transactions' transfers priced at block time
 * the first time it is asked for, then cached (`history_volumes`) under the bucket's revision and served until
 * a change of transactions, transfers or prices at or before its end gives the bucket a new one; `tvlUsd` is
 * summed at read time from the followed holders' hourly net transfers (`history_holder_hours`), for tokens
 * whose whole history is stored, and priced at the bucket's end.
 */
export function createTimeSeries(common: Common, deps: TimeSeriesDeps): TimeSeries {
  const { config } = common;
  const now = deps.now ?? (() => new Date());
  const decimals = new Map(config.tokens.map((t) => [t.address as string, t.decimals]));
  const configHash = historyConfigHash(config);
  const tvlHolders = [...new Set(config.protocols.flatMap((p) => p.tvlAddresses as string[]))];
  /** volumes being computed, by span, protocol key, bucket and revision: concurrent requests share them */
  const inFlight = new Map<string, Promise<number>>();
  /** the last chunk of volumes being computed: the next one starts after it */
  let computing: Promise<unknown> = Promise.resolve();
  let holdersSynced: Promise<unknown> | undefined;

  const usdOf = (token: string, amount: bigint, price: number | null | undefined): number | null => {
    const scale = decimals.get(token);
    if (price === null || price === undefined || scale === undefined) return null;
    return Number(formatUnits(amount, scale)) * price;
  };

  /** The USD volume of each bucket of `rows` (consecutive, ascending), by bucket start. */
  async function computeVolumes(
    span: HistorySpan,
    protocol: string | null,
    rows: readonly HistoryBucketRow[],
  ): Promise<Map<number, number>> {
    const first = rows[0];
    const last = rows.at(-1);
    const sums = new Map(rows.map((r) => [r.bucket.getTime(), 0]));
    if (!first || !last) return sums;
    const transfers = await getVolumeTransfers(deps.db, {
      protocol,
      since: first.bucket,
      until: new Date(last.bucket.getTime() + SPAN_MS[span]),
    });
    const txs: TransactionToValue[] = [];
    for (const t of transfers) {
      const current = txs.at(-1);
      const transfer = {
        logIndex: t.logIndex,
        tokenAddress: t.token,
        fromAddress: t.from,
        toAddress: t.to,
        amount: t.amount,
      };
      if (current?.tx.hash === t.txHash) (current.transfers as (typeof transfer)[]).push(transfer);
      else {
        const tx = {
          hash: t.txHash,
          blockNumber: t.blockNumber,
          blockTimestamp: t.blockTimestamp,
          protocol: t.protocol,
        };
        txs.push({ tx, transfers: [transfer] });
      }
    }
    const values = await deps.valueTransactions(txs);
    const size = SPAN_MS[span];
    for (const { tx } of txs) {
      const value = values.get(tx.hash)?.valueUsd ?? null;
      const bucket = Math.floor(tx.blockTimestamp.getTime() / size) * size;
      if (value !== null) sums.set(bucket, (sums.get(bucket) ?? 0) + value);
    }
    return sums;
  }

  /** Fill in the volume of every row without a valid cached one, computing (and caching) what is missing. */
  async function fillVolumes(span: HistorySpan, key: string, rows: HistoryBucketRow[]): Promise<number[]> {
    const flightKey = (r: HistoryBucketRow) => `${span}|${key}|${r.bucket.getTime()}|${r.revision}`;
    const chunks: HistoryBucketRow[][] = [];
    let chunk: HistoryBucketRow[] = [];
    let chunkCount = 0;
    const pending = new Map<HistoryBucketRow, Promise<number>>();
    for (const row of rows) {
      const flying = inFlight.get(flightKey(row));
      if (row.volumeUsd !== null || row.transactionCount === 0 || flying) {
        if (flying) pending.set(row, flying);
        if (chunk.length > 0) chunks.push(chunk);
        chunk = [];
        chunkCount = 0;
        continue;
      }
      if (chunk.length > 0 && chunkCount + row.transactionCount > VOLUME_CHUNK) {
        chunks.push(chunk);
        chunk = [];
        chunkCount = 0;
      }
      chunk.push(row);
      chunkCount += row.transactionCount;
    }
    if (chunk.length > 0) chunks.push(chunk);
    for (const c of chunks) {
      // One chunk at a time in the whole process: a cold range of 100,000 transactions is read and valued
      // 5,000 at a time, whoever asked for it, instead of all at once.
      const computed = computing
        .then(() => computeVolumes(span, key === ALL_PROTOCOLS ? null : key, c))
        .then(async (sums) => {
          const volumes = c.map((r) => ({
            bucket: r.bucket,
            revision: r.revision,
            volumeUsd: sums.get(r.bucket.getTime()) ?? 0,
          }));
          await saveHistoryVolumes(deps.db, { span, protocol: key, configHash, volumes });
          return sums;
        });
      computing = computed.catch(() => undefined);
      for (const r of c) {
        const one = computed.then((sums) => sums.get(r.bucket.getTime()) ?? 0);
        inFlight.set(flightKey(r), one);
        pending.set(r, one);
        void one.then(
          () => inFlight.delete(flightKey(r)),
          () => inFlight.delete(flightKey(r)),
        );
      }
    }
    return Promise.all(
      rows.map((r) => pending.get(r) ?? Promise.resolve(r.transactionCount === 0 ? 0 : (r.volumeUsd ?? 0))),
    );
  }

  /** TVL at each bucket's end, null for all when a tracked token's balances at past times are not known. */
  async function tvlAt(
    protocol: ProtocolConfig,
    starts: readonly Date[],
    span: HistorySpan,
  ): Promise<(number | null)[]> {
    const holders = [...new Set(protocol.tvlAddresses as string[])];
    const first = starts[0];
    const last = starts.at(-1);
    if (holders.length === 0 || !first || !last) return starts.map(() => 0);
    holdersSynced ??= syncHistoryHolders(deps.db, tvlHolders).catch((error: unknown) => {
      holdersSynced = undefined;
      throw error;
    });
    await holdersSynced;
    const modes = await getTokenModes(deps.db);
    const complete = new Set(modes.filter((m) => m.mode === "delta").map((m) => m.token));
    const tokens = config.tokens.map((t) => t.address as string);
    if (!tokens.every((t) => complete.has(t))) return starts.map(() => null);
    const size = SPAN_MS[span];
    const hours = await getHolderHours(deps.db, {
      holders,
      tokens,
      since: first,
      until: new Date(last.getTime() + size),
    });
    const balance = new Map(hours.before);
    const clock = now().getTime();
    const held: { token: string; amount: bigint; at: Date }[][] = [];
    let h = 0;
    for (const start of starts) {
      const end = start.getTime() + size;
      for (; h < hours.hours.length && (hours.hours[h]?.hour.getTime() ?? end) < end; h++) {
        const row = hours.hours[h];
        if (row) balance.set(row.token, (balance.get(row.token) ?? 0n) + row.delta);
      }
      const at = new Date(Math.min(end - 1, clock));
      held.push(
        [...balance].filter(([, amount]) => amount !== 0n).map(([token, amount]) => ({ token, amount, at })),
      );
    }
    const queries = held.flat();
    const prices = (await deps.prices.pricesAt(queries.map((q) => ({ token: q.token, time: q.at })))).map(
      (p) => p?.usd ?? null,
    );
    let q = 0;
    return held.map((bucket) => {
      let usd = 0;
      for (const b of bucket) usd += usdOf(b.token, b.amount, prices[q++]) ?? 0;
      return usd;
    });
  }

  async function valueStale(limit = 500): Promise<number> {
    const clock = now().getTime();
    // The hour in progress (it is small) and every closed bucket.
    const stale = await getStaleBuckets(deps.db, {
      configHash,
      before: {
        hour: new Date(Math.floor(clock / SPAN_MS.hour) * SPAN_MS.hour + SPAN_MS.hour),
        day: new Date(Math.floor(clock / SPAN_MS.day) * SPAN_MS.day),
      },
      limit,
    });
    const groups = new Map<string, { span: HistorySpan; protocol: string; buckets: Date[] }>();
    for (const b of stale) {
      const key = `${b.span}|${b.protocol}`;
      const group = groups.get(key) ?? { span: b.span, protocol: b.protocol, buckets: [] };
      group.buckets.push(b.bucket);
      groups.set(key, group);
    }
    let valued = 0;
    for (const group of groups.values()) {
      const times = group.buckets.map((b) => b.getTime());
      // The stored buckets between the first and last stale ones: those still valid split the chunks.
      const rows = await getHistoryBuckets(deps.db, {
        span: group.span,
        protocol: group.protocol,
        first: new Date(Math.min(...times)),
        last: new Date(Math.max(...times)),
        configHash,
      });
      await fillVolumes(group.span, group.protocol, rows);
      valued += group.buckets.length;
    }
    return valued;
  }

  return {
    valueStale,
    async points(query) {
      const starts = bucketStarts(query.from, query.to, query.span);
      const first = starts[0];
      const last = starts.at(-1);
      if (!first || !last) return [];
      const key = query.protocol?.id ?? ALL_PROTOCOLS;
      const rows = await getHistoryBuckets(deps.db, {
        span: query.span,
        protocol: key,
        first,
        last,
        configHash,
      });
      const [volumes, tvl] = await Promise.all([
        fillVolumes(query.span, key, rows),
        query.protocol ? tvlAt(query.protocol, starts, query.span) : null,
      ]);
      const byTime = new Map(
        rows.map((r, i) => [r.bucket.getTime(), { row: r, volumeUsd: volumes[i] ?? 0 }]),
      );
      return starts.map((time, i) => {
        const found = byTime.get(time.getTime());
        const point: HistoryPoint = {
          time,
          transactionCount: found?.row.transactionCount ?? 0,
          uniqueUsers: found?.row.uniqueUsers ?? 0,
          volumeUsd: found?.volumeUsd ?? 0,
        };
        if (tvl) point.tvlUsd = tvl[i] ?? null;
        return point;
      });
    },
  };
}

/** What a bucket's volume depends on besides stored rows and price history: protocol addresses, tokens, static prices. */
function historyConfigHash(config: Config): string {
  const shape = {
    protocols: config.protocols.map((p) => [p.id, protocolAddresses(p).sort()]),
    tokens: config.tokens.map((t) => [t.address, t.decimals, t.price ?? null]).sort(),
  };
  return createHash("sha256").update(JSON.stringify(shape)).digest("hex").slice(0, 16);
}
