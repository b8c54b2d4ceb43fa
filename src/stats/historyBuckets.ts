import type { HistorySpan } from "../store/historyReads.ts";

/** The length of a bucket: UTC hours and days have no daylight-saving jumps. */
export const SPAN_MS: Record<HistorySpan, number> = { hour: 3_600_000, day: 86_400_000 };

/** The start of the UTC bucket holding `time`. */
export function bucketStart(time: Date, span: HistorySpan): Date {
  const size = SPAN_MS[span];
  return new Date(Math.floor(time.getTime() / size) * size);
}

/** The starts of every bucket from the one holding `from` to the one holding `to`, ascending. */
export function bucketStarts(from: Date, to: Date, span: HistorySpan): Date[] {
  const size = SPAN_MS[span];
  const starts: Date[] = [];
  for (let t = bucketStart(from, span).getTime(); t <= to.getTime(); t += size) starts.push(new Date(t));
  return starts;
}

/** How many buckets `bucketStarts(from, to, span)` holds, without building them. */
export function bucketCount(from: Date, to: Date, span: HistorySpan): number {
  const size = SPAN_MS[span];
  return Math.floor(to.getTime() / size) - Math.floor(from.getTime() / size) + 1;
}
