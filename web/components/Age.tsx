import { now } from "../clock.ts";
import { formatAge, formatTime } from "../format.ts";

/** A time as "12 s ago" that keeps counting, with the absolute time on hover and in `datetime`. */
export function Age({ iso }: { iso: string }) {
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {formatAge(iso, now.value)}
    </time>
  );
}
