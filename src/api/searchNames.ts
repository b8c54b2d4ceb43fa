import type { ProtocolConfig, TokenConfig } from "../config/schema.ts";
import type { ProtocolResultJson, TokenResultJson } from "./schemas/search.ts";
import { checksum } from "./toTransactionJson.ts";

/** A token as the search returns it. */
export function tokenResult(token: TokenConfig): TokenResultJson {
  return {
    type: "token",
    address: checksum(token.address),
    symbol: token.symbol,
    name: token.name,
    decimals: token.decimals,
    protocol: token.protocol,
    logo: token.logo,
  };
}

/**
 * The text part of the search (SPEC §4 row 12): tracked tokens by symbol or name prefix and protocols by id
 * or name prefix, case-insensitive, from the configuration (no query). Ranked: exact symbol or id first,
 * then exact name, then prefixes of symbol or id, then prefixes of name; config order within a rank, tokens
 * before protocols.
 */
export function searchNames(
  config: { tokens: readonly TokenConfig[]; protocols: readonly ProtocolConfig[] },
  text: string,
): (TokenResultJson | ProtocolResultJson)[] {
  const term = text.trim().toLowerCase();
  if (term === "") return [];
  const rank = (key: string, name: string): number => {
    const k = key.toLowerCase();
    const n = name.toLowerCase();
    if (k === term) return 0;
    if (n === term) return 1;
    if (k.startsWith(term)) return 2;
    if (n.startsWith(term)) return 3;
    return -1;
  };
  const ranked: { rank: number; order: number; result: TokenResultJson | ProtocolResultJson }[] = [];
  config.tokens.forEach((token, i) => {
    const r = rank(token.symbol, token.name);
    if (r >= 0) ranked.push({ rank: r, order: i, result: tokenResult(token) });
  });
  config.protocols.forEach((protocol, i) => {
    const r = rank(protocol.id, protocol.name);
    const result: ProtocolResultJson = { type: "protocol", id: protocol.id, name: protocol.name };
    if (r >= 0) ranked.push({ rank: r, order: config.tokens.length + i, result });
  });
  return ranked.sort((a, b) => a.rank - b.rank || a.order - b.order).map((r) => r.result);
}
