import type { ProtocolConfig } from "../config/schema.ts";

/**
 * The addresses that are the protocol's own for `dailyVolume` (SPEC §7 "transfers into P's addresses and out
 * of P's addresses"): every configured contract, exclusive or shared, plus its `tvlAddresses`. Lowercase,
 * de-duplicated, contracts first.
 */
export function protocolAddresses(protocol: ProtocolConfig): string[] {
  return [...new Set([...protocol.contracts.map((c) => c.address), ...protocol.tvlAddresses])];
}
