import Type from "typebox";
import { ApiError } from "./errorRegistry.ts";

/**
 * The parameters shared by the history endpoints (SPEC §10.3 "Parameters of both (and of 10.1)"):
 * `interval` hour | day (default day), `from` and `to` as ISO 8601 or unix seconds, default `to` now and
 * `from` 30 days (day) or 48 hours (hour) before it; buckets are UTC hours or days, every one from the bucket
 * holding `from` to the one holding `to`; `from` after `to`, an unknown interval or more than 1,000 buckets
 * is 400 INVALID_PARAMETER.
 */

export type HistoryInterval = "hour" | "day";

/**
 * A parsed range: the range as asked (defaults filled in) and the starts of its first and last buckets. The
 * buckets themselves (`historyBuckets`) are built only by what reads them: a cached answer needs just the key.
 */
export type HistoryRange = {
  interval: HistoryInterval;
  from: Date;
  to: Date;
  /** the start (ms) of the bucket holding `from` */
  first: number;
  /** the start (ms) of the bucket holding `to` */
  last: number;
};

export const MAX_HISTORY_BUCKETS = 1000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** The querystring schema of the three parameters (for the route schemas and the OpenAPI document). */
export const HistoryQuerySchema = Type.Object(
  {
    interval: Type.Optional(
      Type.Unsafe<HistoryInterval>({
        type: "string",
        enum: ["hour", "day"],
        description: "bucket size: `hour` or `day` (default `day`)",
        examples: ["day"],
      }),
    ),
    from: Type.Optional(
      Type.String({
        maxLength: 40,
        description: "start: ISO 8601 or unix seconds (default `to` minus 30 days, or 48 hours for `hour`)",
        examples: ["2026-11-01T00:00:00Z"],
      }),
    ),
    to: Type.Optional(
      Type.String({
        maxLength: 40,
        description: "end: ISO 8601 or unix seconds (default now)",
        examples: ["1795000000"],
      }),
    ),
  },
  { additionalProperties: false },
);

export type HistoryQuery = {
  interval?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
};

/** The milliseconds of one bucket. */
export function bucketMs(interval: HistoryInterval): number {
  return interval === "hour" ? HOUR_MS : DAY_MS;
}

/** The start of the UTC hour or day holding `time`. */
export function bucketStart(time: Date, interval: HistoryInterval): Date {
  const size = bucketMs(interval);
  return new Date(Math.floor(time.getTime() / size) * size);
}

/**
 * Parse and check `interval`, `from` and `to` against the clock `now`.
 *
 * @throws {ApiError} INVALID_PARAMETER naming the parameter.
 */
export function parseHistoryRange(query: HistoryQuery, now: Date): HistoryRange {
  const interval = query.interval ?? "day";
  if (interval !== "hour" && interval !== "day") {
    throw new ApiError("INVALID_PARAMETER", "interval: must be `hour` or `day`");
  }
  const to = query.to === undefined ? now : parseTime("to", query.to);
  const from =
    query.from === undefined
      ? new Date(to.getTime() - (interval === "day" ? 30 * DAY_MS : 48 * HOUR_MS))
      : parseTime("from", query.from);
  if (from.getTime() > to.getTime()) throw new ApiError("INVALID_PARAMETER", "from: must not be after `to`");
  const size = bucketMs(interval);
  const first = bucketStart(from, interval).getTime();
  const last = bucketStart(to, interval).getTime();
  const count = (last - first) / size + 1;
  if (count > MAX_HISTORY_BUCKETS) {
    throw new ApiError(
      "INVALID_PARAMETER",
      `from: the range holds ${count} ${interval} buckets, more than ${MAX_HISTORY_BUCKETS}; narrow it`,
    );
  }
  return { interval, from, to, first, last };
}

/** The start of every bucket of `range`, ascending: from the one holding `from` to the one holding `to`. */
export function historyBuckets(range: HistoryRange): Date[] {
  const size = bucketMs(range.interval);
  const buckets: Date[] = [];
  for (let t = range.first; t <= range.last; t += size) buckets.push(new Date(t));
  return buckets;
}

/** Years 1970-9999 as unix seconds or ISO 8601 (a date, or a date and time). */
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * A time parameter: unix seconds (digits, optionally with a fraction) or ISO 8601.
 *
 * @throws {ApiError} INVALID_PARAMETER naming `name`.
 */
export function parseTime(name: string, value: string): Date {
  const text = value.trim();
  let ms = Number.NaN;
  if (/^\d{1,12}(\.\d+)?$/.test(text)) ms = Number(text) * 1000;
  else if (ISO.test(text)) {
    // A date and time without a zone is UTC here (Date.parse would read it as local time).
    const zoned = /[T ]\d{2}:\d{2}/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? `${text}Z` : text;
    ms = Date.parse(zoned.replace(" ", "T"));
  }
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_MS) {
    throw new ApiError("INVALID_PARAMETER", `${name}: must be ISO 8601 or unix seconds`);
  }
  return new Date(ms);
}
