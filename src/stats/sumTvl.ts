import { formatUnits } from "viem";
import type { ProtocolConfig, TokenConfig } from "../config/schema.ts";
import type { Price } from "../prices/price.ts";
import type { HolderBalance } from "../store/usdStatsReads.ts";

/**
 * Each protocol's TVL in USD (SPEC §7): over the tracked tokens, the cached balances of its `tvlAddresses`
 * scaled by the token's decimals, times the token's price; an unpriced token counts 0. An address listed by
 * two protocols counts for both.
 */
export function sumTvl(
  protocols: readonly ProtocolConfig[],
  tokens: readonly TokenConfig[],
  balances: readonly HolderBalance[],
  prices: ReadonlyMap<string, Price | null>,
): Map<string, number> {
  const decimals = new Map(tokens.map((t) => [t.address as string, t.decimals]));
  const byHolder = new Map<string, HolderBalance[]>();
  for (const b of balances) {
    const list = byHolder.get(b.holder);
    if (list) list.push(b);
    else byHolder.set(b.holder, [b]);
  }
  const tvl = new Map<string, number>();
  for (const protocol of protocols) {
    let usd = 0;
    for (const holder of new Set(protocol.tvlAddresses)) {
      for (const b of byHolder.get(holder) ?? []) {
        const price = prices.get(b.token);
        const scale = decimals.get(b.token);
        if (!price || scale === undefined || b.balance <= 0n) continue;
        usd += Number(formatUnits(b.balance, scale)) * price.usd;
      }
    }
    tvl.set(protocol.id, usd);
  }
  return tvl;
}
