import { erc20Abi, getAddress } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { Address } from "../config/schema.ts";
import { errorMessage } from "../internal/errors.ts";
import type { Logger } from "../internal/logger.ts";
import { ApiError } from "./errorRegistry.ts";

/**
 * `totalSupply()` of tracked tokens for the token detail and the holders' `share` (SPEC §4 rows 2-3), read
 * live from the node with a short in-memory cache: a burst of requests makes one `eth_call` per token per
 * `ttlMs`, and a node outage serves the last value read rather than failing the page.
 */
export type TotalSupplyReader = {
  /**
   * The token's total supply: cached when younger than `ttlMs`, else read again (one call in flight per
   * token). When the read fails or outlasts `timeoutMs`, the last value read is returned however old.
   *
   * @throws {ApiError} `UPSTREAM_UNAVAILABLE` when the node fails and no value was ever read.
   */
  get(token: Address): Promise<bigint>;
};

export type TotalSupplyReaderOptions = {
  /** How long a value is served without asking the node again (default 15 s). */
  ttlMs?: number;
  /** How long a request waits for the node before it falls back to the last value (default 5 s). */
  timeoutMs?: number;
  /** Clock in ms (tests). */
  now?: () => number;
};

type Entry = { value?: bigint; readAt: number; inFlight?: Promise<bigint> };

/** Build the reader over the shared chain client (`eth_call` through its batching, retries and failover). */
export function createTotalSupplyReader(
  deps: { chain: ChainClient; logger: Logger },
  options: TotalSupplyReaderOptions = {},
): TotalSupplyReader {
  const ttlMs = options.ttlMs ?? 15_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  const refresh = (token: Address, entry: Entry): Promise<bigint> => {
    entry.inFlight ??= deps.chain.client
      .readContract({ address: token, abi: erc20Abi, functionName: "totalSupply" })
      .then((value) => {
        entry.value = value;
        entry.readAt = now();
        return value;
      })
      .finally(() => {
        delete entry.inFlight;
      });
    return entry.inFlight;
  };

  return {
    async get(token) {
      const key = token.toLowerCase() as Address;
      let entry = entries.get(key);
      if (!entry) {
        entry = { readAt: 0 };
        entries.set(key, entry);
      }
      if (entry.value !== undefined && now() - entry.readAt < ttlMs) return entry.value;
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          refresh(key, entry),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
      } catch (error) {
        deps.logger.warn(
          { token: key, err: errorMessage(error), stale: entry.value !== undefined },
          "totalSupply() read failed",
        );
        if (entry.value !== undefined) return entry.value;
        throw new ApiError(
          "UPSTREAM_UNAVAILABLE",
          `totalSupply() of ${getAddress(key)} could not be read from the node; try again shortly`,
        );
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
