import { getAddress } from "viem";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { Address } from "../config/schema.ts";
import { errorMessage } from "../internal/errors.ts";
import type { Logger } from "../internal/logger.ts";
import { createTtlCache } from "./cache/createTtlCache.ts";
import { ApiError } from "./errorRegistry.ts";

/**
 * Native balance and code presence of any address, live from the node for the address view and the search
 * (SPEC §4 rows 12-13), behind short caches: a burst of requests for one address makes one
 * `eth_getBalance` per `balanceTtlMs` and one `eth_getCode` per `codeTtlMs`, read ahead of expiry while the
 * address is being asked for.
 */
export type AccountReader = {
  /**
   * [`eth_getBalance`](https://ethereum.org/en/developers/docs/apis/json-rpc/#eth_getbalance) at `latest`.
   * @throws {ApiError} `UPSTREAM_UNAVAILABLE` when the node fails or does not answer within `timeoutMs`.
   */
  balance(address: Address): Promise<bigint>;
  /**
   * Whether [`eth_getCode`](https://ethereum.org/en/developers/docs/apis/json-rpc/#eth_getcode) is non-empty.
   * @throws {ApiError} `UPSTREAM_UNAVAILABLE` as `balance`.
   */
  isContract(address: Address): Promise<boolean>;
};

export type AccountReaderOptions = {
  /** default 5 s: balances move with every block */
  balanceTtlMs?: number;
  /** default 60 s: code appears once, at deployment */
  codeTtlMs?: number;
  /** how long a request waits for the node (default 5 s) */
  timeoutMs?: number;
  /** addresses kept per cache (default 10,000) */
  maxEntries?: number;
};

export function createAccountReader(
  deps: { chain: ChainClient; logger: Logger },
  options: AccountReaderOptions = {},
): AccountReader {
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxEntries = options.maxEntries ?? 10_000;
  // Read again in the background in the last fifth of their life: an address viewed steadily never waits
  // for the node, and no value served is older than its TTL.
  const cacheOf = <V>(ttlMs: number) =>
    createTtlCache<string, V>({ ttlMs, refreshAheadMs: ttlMs * 0.8, maxEntries });
  const balances = cacheOf<bigint>(options.balanceTtlMs ?? 5000);
  const codes = cacheOf<boolean>(options.codeTtlMs ?? 60_000);

  const read = async <T>(what: string, address: Address, call: () => Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        call(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (error) {
      deps.logger.warn({ address, err: errorMessage(error) }, `${what} read failed`);
      throw new ApiError(
        "UPSTREAM_UNAVAILABLE",
        `the ${what} of ${getAddress(address)} could not be read from the node; try again shortly`,
      );
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    balance(address) {
      const key = address.toLowerCase() as Address;
      return balances.get(key, () =>
        read("balance", key, () => deps.chain.client.getBalance({ address: key, blockTag: "latest" })),
      );
    },
    isContract(address) {
      const key = address.toLowerCase() as Address;
      return codes.get(key, () =>
        read("code", key, async () => {
          const code = await deps.chain.client.getCode({ address: key, blockTag: "latest" });
          return code !== undefined && code !== "0x";
        }),
      );
    },
  };
}
