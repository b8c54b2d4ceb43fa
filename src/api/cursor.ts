import { ApiError } from "./errorRegistry.ts";

/**
 * Opaque keyset cursors for lists ordered newest first: the position of the last item served, as
 * base64url("<blockNumber>:<index>") with a version prefix. Paging by position instead of offset keeps
 * pages stable while new transactions arrive, and deep pages as fast as the first (index seek).
 */
export type Position = { blockNumber: number; index: number };

const PREFIX = "v1:";

export function encodeCursor(position: Position): string {
  return Buffer.from(`${PREFIX}${position.blockNumber}:${position.index}`, "utf8").toString("base64url");
}

/** Decode a cursor from a query string; a malformed one is a 400 naming the parameter. */
export function decodeCursor(cursor: string): Position {
  const text = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("utf8") : "";
  const match = /^v1:(\d{1,15}):(\d{1,9})$/.exec(text);
  if (!match) throw new ApiError("INVALID_PARAMETER", "cursor: not a cursor returned by this API");
  return { blockNumber: Number(match[1]), index: Number(match[2]) };
}

/** The cursor for the next page: the last item's position when the page is full, else null. */
export function nextCursor<T>(
  items: readonly T[],
  limit: number,
  position: (item: T) => Position,
): string | null {
  const last = items.at(-1);
  return items.length === limit && last !== undefined ? encodeCursor(position(last)) : null;
}
