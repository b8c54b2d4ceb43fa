import { createHmac, timingSafeEqual } from "node:crypto";

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/**
 * Whether `signature` is the hex HMAC-SHA256 of `message` under any of `secrets` (several while a key is
 * rotated). The comparison is constant-time (`crypto.timingSafeEqual` on 32-byte buffers) and every secret is
 * tried even after a match, so the timing tells neither how much of the signature matched nor which key did.
 * A missing or malformed signature never matches.
 */
export function hmacMatches(
  message: string,
  signature: string | undefined,
  secrets: readonly string[],
): boolean {
  if (signature === undefined || !HEX_SHA256.test(signature)) return false;
  const given = Buffer.from(signature, "hex");
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac("sha256", secret).update(message, "utf8").digest();
    matched = timingSafeEqual(expected, given) || matched;
  }
  return matched;
}

/** The hex HMAC-SHA256 of `message` (how Alchemy and QuickNode sign; tests sign fixtures with it). */
export function hmacHex(message: string, secret: string): string {
  return createHmac("sha256", secret).update(message, "utf8").digest("hex");
}
