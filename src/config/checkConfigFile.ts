import type { ConfigFile } from "./schema.ts";

/**
 * The checks a schema cannot express, run on a validated file (SPEC §1 "Config file"). Returns one line per
 * problem, each naming the key path; an empty list means the file is consistent:
 * - protocol ids are unique, and every contract address is configured once (across all protocols);
 * - every token names a configured protocol, and every token address is configured once;
 * - `price.pool` and `price.quote` come together, the quote is a tracked token other than the token itself,
 *   and the quote can itself be priced (a static `usd`, its own pool, or a price API), without cycles;
 * - `prices.api.kind: alchemy` has an `apiKey` and a `network`.
 */
export function checkConfigFile(file: ConfigFile): string[] {
  return [...checkProtocols(file), ...checkTokens(file), ...checkPriceApi(file)];
}

function checkProtocols(file: ConfigFile): string[] {
  const issues: string[] = [];
  const ids = new Map<string, number>();
  const contracts = new Map<string, string>();
  file.protocols.forEach((protocol, p) => {
    const first = ids.get(protocol.id);
    if (first === undefined) ids.set(protocol.id, p);
    else
      issues.push(`protocols[${p}].id: duplicate protocol id "${protocol.id}" (also protocols[${first}].id)`);
    protocol.contracts.forEach((contract, c) => {
      const path = `protocols[${p}].contracts[${c}].address`;
      const address = contract.address.toLowerCase();
      const seen = contracts.get(address);
      if (seen === undefined) contracts.set(address, path);
      else issues.push(`${path}: duplicate contract address ${address} (also ${seen})`);
    });
  });
  return issues;
}

function checkTokens(file: ConfigFile): string[] {
  const issues: string[] = [];
  const protocolIds = new Set(file.protocols.map((protocol) => protocol.id));
  const tokens = new Map<string, number>();
  file.tokens.forEach((token, t) => {
    if (!protocolIds.has(token.protocol)) {
      const known =
        protocolIds.size > 0 ? `configured: ${[...protocolIds].join(", ")}` : "no protocols configured";
      issues.push(`tokens[${t}].protocol: unknown protocol "${token.protocol}" (${known})`);
    }
    const address = token.address.toLowerCase();
    const first = tokens.get(address);
    if (first === undefined) tokens.set(address, t);
    else
      issues.push(`tokens[${t}].address: duplicate token address ${address} (also tokens[${first}].address)`);
  });
  for (let t = 0; t < file.tokens.length; t++) issues.push(...checkTokenPrice(file, t, tokens));
  return issues;
}

function checkTokenPrice(file: ConfigFile, t: number, tokens: ReadonlyMap<string, number>): string[] {
  const price = file.tokens[t]?.price;
  if (price === undefined) return [];
  const path = `tokens[${t}].price`;
  if (price.pool !== undefined && price.quote === undefined)
    return [`${path}.quote: is required when price.pool is set`];
  if (price.quote !== undefined && price.pool === undefined)
    return [`${path}.pool: is required when price.quote is set`];
  if (price.quote === undefined) return [];
  const quote = price.quote.toLowerCase();
  const q = tokens.get(quote);
  if (q === undefined) return [`${path}.quote: ${quote} is not a tracked token (add it to tokens)`];
  if (q === t) return [`${path}.quote: must be another token than the priced token itself`];
  if (file.prices.api !== undefined) return [];
  // Without a price API the quote must end in a static price: follow the chain of pools.
  const visited = new Set<number>([t]);
  for (let current: number | undefined = q; current !== undefined; ) {
    const next = file.tokens[current]?.price;
    if (next?.usd !== undefined) return [];
    if (next?.quote === undefined) {
      return [
        `${path}.quote: ${quote} has no price (give it price.usd or price.pool, or configure prices.api)`,
      ];
    }
    if (visited.has(current)) return [`${path}.quote: circular pool pricing through ${quote}`];
    visited.add(current);
    current = tokens.get(next.quote.toLowerCase());
  }
  return [];
}

function checkPriceApi(file: ConfigFile): string[] {
  const api = file.prices.api;
  if (api?.kind !== "alchemy") return [];
  const issues: string[] = [];
  if (api.apiKey === undefined || api.apiKey === "")
    issues.push("prices.api.apiKey: is required when kind is alchemy");
  if (api.network === undefined) issues.push("prices.api.network: is required when kind is alchemy");
  return issues;
}
