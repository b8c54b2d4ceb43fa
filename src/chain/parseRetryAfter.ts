/**
 * Parse an HTTP `Retry-After` header into milliseconds to wait.
 * Accepts both forms of RFC 9110 §10.2.3: delay-seconds (`"2"`; a fraction is tolerated) and an
 * HTTP-date (`"Wed, 21 Oct 2015 07:28:00 GMT"`, relative to `now`). Returns undefined when the value is
 * absent or unreadable; a date in the past gives 0.
 * @see https://www.rfc-editor.org/rfc/rfc9110#field.retry-after
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  if (!/[a-z]/i.test(trimmed)) return undefined; // an HTTP-date names its day and month
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
