import type { SuggestedRange } from "./errors.ts";

/** What a "range too large" message says about an acceptable eth_getLogs range. */
export type RangeHint = {
  /** An explicit range the provider says will work (Alchemy, Infura, zkSync). */
  suggested?: SuggestedRange;
  /** The largest number of blocks the provider accepts per request. */
  maxBlockRange?: number;
};

// "[0x0, 0x1f3f]" (Alchemy), "[0x1, 0x2f]" (Infura); decimal bounds are accepted too.
const SUGGESTED = /\[\s*(0x[0-9a-f]+|\d+)\s*,\s*(0x[0-9a-f]+|\d+)\s*\]/i;

// Providers that state their block-span limit instead of a range. The number is treated as a block
// count (inclusive), which is never more than what they accept.
const MAX_RANGE: readonly RegExp[] = [
  /limited to an? ([\d,.]+) (?:block )?range/i, // QuickNode, 1RPC, Blast: "eth_getLogs is limited to a 10,000 range"
  /limited to ([\d,.]+) blocks?/i, // BlockPI
  /max(?:imum)? block range:? ([\d,.]+)/i, // "exceed maximum block range: 5000", "query exceeds max block range 100000"
  /max range: ([\d,.]+)/i, // Cloudflare
  /at most ([\d,.]+) blocks/i, // Coinbase: "please limit the query to at most 1000 blocks"
  /block range exceeds ([\d,.]+)/i,
  /block range greater than ([\d,.]+) max/i,
  /block range is too wide \(maximum ([\d,.]+)\)/i, // Moonbeam
  /maximum is set to ([\d,.]+)/i, // Avalanche
  /maximum allowed number of requested blocks is ([\d,.]+)/i, // thirdweb
  /\[from, to\] blocks distance: ([\d,.]+)/i, // Ankr
  /exceeds the range allowed for your plan \(\d+ > (\d+)\)/i, // Blast
  /query must be smaller than size ([\d,.]+)/i, // Harmony
];

function toBigInt(text: string): bigint {
  return BigInt(text); // BigInt() reads both "0x1f3f" and "8000"
}

/**
 * Read the range hint out of a provider's "range too large" message: an explicit suggested range in
 * hex or decimal, and/or a maximum block span. Returns an empty object when the message has neither.
 */
export function parseRangeHint(message: string): RangeHint {
  const hint: RangeHint = {};
  const suggested = SUGGESTED.exec(message);
  if (suggested?.[1] !== undefined && suggested[2] !== undefined) {
    const fromBlock = toBigInt(suggested[1]);
    const toBlock = toBigInt(suggested[2]);
    if (fromBlock <= toBlock) hint.suggested = { fromBlock, toBlock };
  }
  for (const pattern of MAX_RANGE) {
    const match = pattern.exec(message);
    if (match?.[1] === undefined) continue;
    const value = Number(match[1].replace(/[,.]/g, ""));
    if (Number.isSafeInteger(value) && value > 0) {
      hint.maxBlockRange = value;
      break;
    }
  }
  return hint;
}
