import { ApiError } from "./errorRegistry.ts";

/** What a search term is, by its shape (SPEC §4 row 12). Hex values are lowercased. */
export type SearchQuery =
  | { kind: "hash"; hash: string; text: string }
  | { kind: "address"; address: string; text: string }
  | { kind: "block"; blockNumber: number; text: string }
  | { kind: "text"; text: string };

const MAX_BLOCK_DIGITS = 15;

/**
 * Classify a search term: a 32-byte 0x-hex is a transaction (or block) hash, a 20-byte 0x-hex an address, a
 * decimal integer a block number, anything else text. Surrounding whitespace is ignored; an empty term is a
 * 400 naming `q`. `text` is the trimmed term, for the name search every kind also runs.
 */
export function parseSearchQuery(q: string): SearchQuery {
  const text = q.trim();
  if (text === "") throw new ApiError("INVALID_PARAMETER", "q: must not be empty");
  if (/^0x[0-9a-fA-F]{64}$/.test(text)) return { kind: "hash", hash: text.toLowerCase(), text };
  if (/^0x[0-9a-fA-F]{40}$/.test(text)) return { kind: "address", address: text.toLowerCase(), text };
  if (/^[0-9]+$/.test(text) && text.replace(/^0+(?=.)/, "").length <= MAX_BLOCK_DIGITS) {
    return { kind: "block", blockNumber: Number(text), text };
  }
  return { kind: "text", text };
}
