import {
  type Chain,
  createPublicClient,
  custom,
  defineChain,
  hexToNumber,
  type PublicClient,
  type Transport,
} from "viem";
import { backoffDelay } from "../internal/backoffDelay.ts";
import type { Common } from "../internal/common.ts";
import { ConfigError, errorMessage } from "../internal/errors.ts";
import { sleep } from "../internal/sleep.ts";
import { classifyRpcError } from "./classifyRpcError.ts";
import { computeUnitsOf } from "./computeUnits.ts";
import { createEndpoint, type Endpoint } from "./createEndpoint.ts";
import {
  type ChainError,
  FatalRpcError,
  InconsistentDataError,
  outcomeOf,
  RateLimitedError,
  RetryableChainError,
  TransientRpcError,
} from "./errors.ts";
import { validateRpcResult } from "./validateRpcResult.ts";

/**
 * The JSON-RPC client every subsystem uses. `client` is a viem PublicClient whose transport goes through
 * this pipeline, so viem actions (getLogs, getBlock, getTransactionReceipt, readContract, multicall…) get
 * batching, the per-URL rate ceiling, classification, retries, failover and counting.
 *
 * Every answer is checked against its request before anyone reads it (`validateRpcResult`): one that
 * contradicts itself is an `InconsistentDataError`, retried like a transient failure (on the next URL when
 * there is one) and counted as `outcome="inconsistent"`.
 *
 * Errors thrown by viem actions wrap ours: `classifyRpcError(error)` finds the chain error inside.
 */
export type ChainClient = {
  client: PublicClient<Transport, Chain>;
  /** A raw JSON-RPC call through the pipeline. The result is the provider's JSON, unchecked. */
  request<T = unknown>(method: string, params: readonly unknown[]): Promise<T>;
  /** eth_chainId of the first healthy URL. */
  getChainId(): Promise<number>;
  /** Check every configured URL against `chain.id`; a mismatch is a ConfigError naming the (redacted) URL. */
  assertChainId(expected: number): Promise<void>;
  /** Calls sent per method (every attempt counts) and their estimated Alchemy compute units. */
  stats(): { requests: Record<string, number>; computeUnits: number };
  resetStats(): void;
  /** Reject queued and in-flight calls; later calls fail. */
  close(): void;
};

export type ChainClientOptions = {
  /** Per HTTP request (default `rpc.timeoutMs`). */
  fetchTimeoutMs?: number;
  /** Retries after the first attempt, failovers included (default 4, i.e. at most 5 attempts). */
  maxRetries?: number;
  /** A call gives up rather than wait past this total (default 30 s). */
  maxElapsedMs?: number;
  /** Rate-limited attempts allowed before the RateLimitedError surfaces (default 2). */
  maxRateLimitRetries?: number;
  /** First backoff cap (default 250 ms). */
  baseDelayMs?: number;
  /** Largest backoff without Retry-After (default 5 s). */
  maxDelayMs?: number;
  /** How long a failing URL is skipped before it is tried again (default 10 s). */
  cooldownMs?: number;
};

// Multicall3 has the same address on almost every EVM chain (https://www.multicall3.com/deployments).
const MULTICALL3 = "0xca11bde05977b3631167028862be2a173976ca11";

type Health = { cooldownUntil: number };

/** A failure of the URL itself (down, throttling, refusing our key, lying): try the next URL. */
function isEndpointFailure(error: ChainError): boolean {
  if (
    error instanceof TransientRpcError ||
    error instanceof RateLimitedError ||
    error instanceof InconsistentDataError
  ) {
    return true;
  }
  return (
    error instanceof FatalRpcError && (error.status === 401 || error.status === 403 || error.status === 404)
  );
}

/**
 * Build the chain client from `common.config.rpc` (urls, batchSize, maxRequestsPerSecond, timeoutMs).
 * The first healthy URL serves every call; a URL that fails (transient error, rate limit, auth) is skipped
 * for a cooldown while the next one serves.
 */
export function createChainClient(common: Common, options: ChainClientOptions = {}): ChainClient {
  const { config, metrics, shutdown } = common;
  const logger = common.logger.child({ module: "chain" });
  const maxRetries = options.maxRetries ?? 4;
  const maxElapsedMs = options.maxElapsedMs ?? 30_000;
  const maxRateLimitRetries = options.maxRateLimitRetries ?? 2;
  const backoff = { baseMs: options.baseDelayMs ?? 250, maxMs: options.maxDelayMs ?? 5_000 };
  const cooldownMs = options.cooldownMs ?? 10_000;

  let requests: Record<string, number> = {};
  let computeUnits = 0;
  let closed = false;
  const onSend = (method: string) => {
    requests[method] = (requests[method] ?? 0) + 1;
    const units = computeUnitsOf(method);
    computeUnits += units;
    metrics.rpcComputeUnits.inc(units);
  };

  const endpoints: Endpoint[] = config.rpc.urls.map((url, index) => {
    if (!/^https?:\/\//i.test(url)) {
      throw new ConfigError([`rpc.urls[${index}]: only http(s) URLs are supported by the chain client`]);
    }
    return createEndpoint({
      url,
      batchSize: config.rpc.batchSize,
      timeoutMs: options.fetchTimeoutMs ?? config.rpc.timeoutMs,
      maxRequestsPerSecond: config.rpc.maxRequestsPerSecond,
      signal: shutdown.signal,
      onSend,
    });
  });
  const health: Health[] = endpoints.map(() => ({ cooldownUntil: 0 }));

  /**
   * The first URL out of cooldown (other than `exclude`, the one that just failed); when all are cooling
   * down, the one that comes back first.
   */
  function pick(exclude?: number): number {
    const now = Date.now();
    let best = 0;
    for (let i = 0; i < health.length; i++) {
      const h = health[i]!;
      if (h.cooldownUntil <= now && i !== exclude) return i;
      if (h.cooldownUntil < health[best]!.cooldownUntil) best = i;
    }
    return best;
  }

  function coolDown(index: number, error: ChainError): void {
    const h = health[index]!;
    const wasHealthy = h.cooldownUntil <= Date.now();
    const retryAfter = error instanceof RateLimitedError ? (error.retryAfterMs ?? 0) : 0;
    h.cooldownUntil = Date.now() + Math.max(cooldownMs, retryAfter);
    if (wasHealthy && endpoints.length > 1) {
      logger.warn(
        { url: endpoints[index]!.label, method: error.method, error: errorMessage(error) },
        "RPC URL failing, using the next one",
      );
    }
  }

  async function call(method: string, params: readonly unknown[], pinned?: number): Promise<unknown> {
    const started = Date.now();
    let attempt = 0;
    let rateLimited = 0;
    for (;;) {
      if (closed) throw new FatalRpcError(`${method} refused: the chain client is closed`, { method });
      const index = pinned ?? pick();
      const endpoint = endpoints[index]!;
      let error: ChainError;
      try {
        const result = await endpoint.request(method, params);
        const inconsistency = validateRpcResult(method, params, result);
        if (!inconsistency) {
          metrics.rpcRequests.inc({ method, outcome: "ok" });
          if (health[index]!.cooldownUntil > 0) health[index]!.cooldownUntil = 0;
          return result;
        }
        // No URL in it: the error and the log line below name the method and the block only.
        error = new InconsistentDataError(`inconsistent provider data: ${inconsistency.problem}`, {
          method,
          blockNumber: inconsistency.block,
        });
      } catch (caught) {
        error = classifyRpcError(caught, { method, url: endpoint.label });
      }
      metrics.rpcRequests.inc({ method, outcome: outcomeOf(error) });
      if (shutdown.signal.aborted || closed) throw error;
      attempt++;
      if (error instanceof InconsistentDataError) {
        const block = error.blockNumber === undefined ? undefined : Number(error.blockNumber);
        logger.warn(
          { method, block, attempt, error: error.shortMessage },
          "provider answered with inconsistent data; not used",
        );
      }
      if (error instanceof RateLimitedError) rateLimited++;
      const endpointFailure = isEndpointFailure(error);
      if (endpointFailure && pinned === undefined) coolDown(index, error);
      if (!(error instanceof RetryableChainError) && !endpointFailure) throw error;
      if (attempt > maxRetries || rateLimited > maxRateLimitRetries) throw error;

      const next = pinned ?? pick(index);
      if (next !== index && health[next]!.cooldownUntil <= Date.now()) continue; // fail over at once
      if (!(error instanceof RetryableChainError)) throw error; // auth failure and no other URL
      const retryAfterMs = error instanceof RateLimitedError ? error.retryAfterMs : undefined;
      const delay = backoffDelay(attempt, backoff, retryAfterMs);
      if (Date.now() - started + delay > maxElapsedMs) throw error;
      logger.debug({ method, attempt, delayMs: delay, error: errorMessage(error) }, "retrying RPC call");
      try {
        await sleep(delay, shutdown.signal);
      } catch {
        throw error;
      }
    }
  }

  const transport = custom(
    { request: ({ method, params }: { method: string; params?: unknown }) => call(method, toParams(params)) },
    { key: "protoscan", name: "protoscan JSON-RPC", retryCount: 0 },
  );
  const chain = defineChain({
    id: config.chain.id,
    name: config.chain.name,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [] } },
    contracts: { multicall3: { address: MULTICALL3 } },
  });
  // cacheTime 0: the indexer must see the real head, not a block number cached for 4 s.
  const client = createPublicClient({ chain, transport, cacheTime: 0 }) as PublicClient<Transport, Chain>;

  return {
    client,
    request: <T>(method: string, params: readonly unknown[]) => call(method, params) as Promise<T>,
    async getChainId() {
      return hexToNumber(asHex(await call("eth_chainId", []), "eth_chainId"));
    },
    async assertChainId(expected) {
      let reached = 0;
      let firstError: unknown;
      for (let i = 0; i < endpoints.length; i++) {
        let actual: number;
        try {
          actual = hexToNumber(asHex(await call("eth_chainId", [], i), "eth_chainId"));
        } catch (error) {
          firstError ??= error;
          logger.warn(
            { url: endpoints[i]!.label, error: errorMessage(error) },
            "could not verify the chain id",
          );
          continue;
        }
        reached++;
        if (actual !== expected) {
          throw new ConfigError([
            `chain.id is ${expected} but the RPC at ${endpoints[i]!.label} reports ${actual}`,
          ]);
        }
      }
      if (reached === 0) throw firstError;
    },
    stats: () => ({ requests: { ...requests }, computeUnits }),
    resetStats() {
      requests = {};
      computeUnits = 0;
    },
    close() {
      closed = true;
      for (const endpoint of endpoints) endpoint.close();
    },
  };
}

function toParams(params: unknown): readonly unknown[] {
  if (params === undefined) return [];
  return Array.isArray(params) ? params : [params];
}

function asHex(value: unknown, method: string): `0x${string}` {
  if (typeof value === "string" && /^0x[0-9a-fA-F]+$/.test(value)) return value as `0x${string}`;
  throw new TransientRpcError(
    `${method} returned ${JSON.stringify(value)?.slice(0, 50)}, not a hex quantity`,
    {
      method,
    },
  );
}
