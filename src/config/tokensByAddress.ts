import type { Config, TokenConfig } from "./schema.ts";

const maps = new WeakMap<readonly TokenConfig[], ReadonlyMap<string, TokenConfig>>();

/**
 * The configured tokens by address (lowercase, as `resolveConfig` leaves every address). Built once per token
 * list and shared by every caller, instead of each route and subsystem building its own copy. Keyed by the
 * list itself rather than stored on the config, so that a config copied with other tokens (`{ ...config,
 * tokens }`, as tests do) never sees a stale map.
 */
export function tokensByAddress(config: Pick<Config, "tokens">): ReadonlyMap<string, TokenConfig> {
  let map = maps.get(config.tokens);
  if (!map) {
    map = new Map(config.tokens.map((t) => [t.address.toLowerCase(), t]));
    maps.set(config.tokens, map);
  }
  return map;
}
