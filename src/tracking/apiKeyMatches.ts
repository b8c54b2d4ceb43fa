import { createHash, timingSafeEqual } from "node:crypto";

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

/**
 * Whether `given` (the `X-API-Key` header) equals one of `keys` (`api.trackTxApiKeys`). Both sides are hashed
 * to 32 bytes first, so `crypto.timingSafeEqual` compares equal lengths and the timing tells neither the
 * length of a key nor how much of it matched; every key is tried even after a match, so it does not tell
 * which key matched either. A missing, repeated (array) or empty header never matches.
 */
export function apiKeyMatches(given: string | string[] | undefined, keys: readonly string[]): boolean {
  if (typeof given !== "string" || given === "") return false;
  const presented = digest(given);
  let matched = false;
  for (const key of keys) matched = timingSafeEqual(digest(key), presented) || matched;
  return matched;
}
