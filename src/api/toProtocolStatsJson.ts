import type { ProtocolUsd } from "../stats/createUsdStats.ts";
import type { ProtocolCounts } from "../store/statsReads.ts";

/** The figures of one protocol as the API serves them (SPEC §7), without its id. */
export type ProtocolFigures = {
  tvl: number;
  dailyVolume: number;
  uniqueUsers: number;
  transactionCount: number;
  updatedAt: string;
};

/**
 * Counts + USD figures -> the protocol figures of `/api/protocol/:id/stats` and `/api/overview`, the one place
 * that shape is built. Counts are live (maintained counters); `tvl` and `dailyVolume` come from the USD
 * statistics computed at `at` (at most a few seconds ago), which is what `updatedAt` says.
 */
export function toProtocolStatsJson(
  counts: ProtocolCounts | undefined,
  usd: ProtocolUsd | undefined,
  at: Date,
): ProtocolFigures {
  return {
    tvl: usd?.tvl ?? 0,
    dailyVolume: usd?.dailyVolume ?? 0,
    uniqueUsers: counts?.uniqueUsers ?? 0,
    transactionCount: counts?.transactionCount ?? 0,
    updatedAt: at.toISOString(),
  };
}
