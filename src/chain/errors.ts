import { BaseError, NonRetryableError, RetryableError } from "../internal/errors.ts";

/**
 * The classes every JSON-RPC failure is sorted into (by `classifyRpcError`, the only place that reads
 * provider messages). Call sites decide with `instanceof`, never by matching strings:
 *
 * | class                | retryable | typical cause                                                  |
 * |----------------------|-----------|----------------------------------------------------------------|
 * | `RateLimitedError`   | yes       | HTTP 429, JSON-RPC 429 / -32005 rate / -32007 / -32016          |
 * | `RangeTooLargeError` | no*       | eth_getLogs range or result too large (*retry a smaller range)  |
 * | `TransientRpcError`  | yes       | 5xx, timeouts, dropped connections, malformed JSON              |
 * | `NotAvailableError`  | yes       | "header not found", "unknown block", block not yet available    |
 * | `InconsistentDataError` | yes    | an answer contradicting itself or its request (`validateRpcResult`) |
 * | `FatalRpcError`      | no        | -32601 method not found, -32602 invalid params, 401/403, revert |
 *
 * Every string these errors carry (`message`, `shortMessage`, `details`, `url`, the `cause` chain) is
 * free of URL credentials: they are redacted where the error is built, not only by the logger.
 */

/** Facts about the failed call; all strings are credential-free. */
export type RpcErrorFields = {
  /** JSON-RPC `error.code`, when the provider sent one. */
  code?: number | undefined;
  /** HTTP status, when the failure came with a non-2xx response. */
  status?: number | undefined;
  /** The JSON-RPC method that failed. */
  method?: string | undefined;
  /** The redacted URL of the endpoint that answered. */
  url?: string | undefined;
  /** JSON-RPC `error.data` (e.g. revert data); kept so viem can still decode reverts. */
  data?: unknown;
};

export type ChainErrorOptions = RpcErrorFields & { cause?: unknown; details?: string };

function baseOptions(options: ChainErrorOptions): { cause?: unknown; details?: string } {
  const out: { cause?: unknown; details?: string } = {};
  if (options.cause !== undefined) out.cause = options.cause;
  if (options.details !== undefined) out.details = options.details;
  return out;
}

function assignFields(target: BaseError, options: ChainErrorOptions): void {
  // `data` is defined only when present: viem looks for the first error in the cause chain that
  // has a `data` key to decode reverts, and an own `data: undefined` would hide the real one.
  if (options.data !== undefined) {
    Object.defineProperty(target, "data", { value: options.data, enumerable: true });
  }
}

/** A chain error worth retrying (the same request may succeed later, possibly on another URL). */
export class RetryableChainError extends RetryableError {
  override name = "RetryableChainError";
  readonly code: number | undefined;
  readonly status: number | undefined;
  readonly method: string | undefined;
  readonly url: string | undefined;
  declare readonly data?: unknown;

  constructor(shortMessage: string, options: ChainErrorOptions = {}) {
    super(shortMessage, baseOptions(options));
    this.code = options.code;
    this.status = options.status;
    this.method = options.method;
    this.url = options.url;
    assignFields(this, options);
  }
}

/** A chain error that the same request will hit again. */
export class NonRetryableChainError extends NonRetryableError {
  override name = "NonRetryableChainError";
  readonly code: number | undefined;
  readonly status: number | undefined;
  readonly method: string | undefined;
  readonly url: string | undefined;
  declare readonly data?: unknown;

  constructor(shortMessage: string, options: ChainErrorOptions = {}) {
    super(shortMessage, baseOptions(options));
    this.code = options.code;
    this.status = options.status;
    this.method = options.method;
    this.url = options.url;
    assignFields(this, options);
  }
}

/** The provider throttled us. Retry after `retryAfterMs` (from `Retry-After`) or a backoff. */
export class RateLimitedError extends RetryableChainError {
  override name = "RateLimitedError";
  /** How long the provider asked us to wait, when it said so (HTTP `Retry-After`). */
  readonly retryAfterMs: number | undefined;

  constructor(shortMessage: string, options: ChainErrorOptions & { retryAfterMs?: number | undefined } = {}) {
    super(shortMessage, options);
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** A block range the provider would accept instead, as parsed from its message. */
export type SuggestedRange = { fromBlock: bigint; toBlock: bigint };

/**
 * eth_getLogs refused the range (too many blocks or too many results). Not retryable as is: the caller
 * shrinks the range (see `logRange.ts`), to `suggested` when the provider named one.
 */
export class RangeTooLargeError extends NonRetryableChainError {
  override name = "RangeTooLargeError";
  /** The range the provider said would work (Alchemy, Infura). */
  readonly suggested: SuggestedRange | undefined;
  /** The largest block span the provider accepts, when it said so (QuickNode "limited to a 10,000 range"). */
  readonly maxBlockRange: number | undefined;

  constructor(
    shortMessage: string,
    options: ChainErrorOptions & {
      suggested?: SuggestedRange | undefined;
      maxBlockRange?: number | undefined;
    } = {},
  ) {
    super(shortMessage, options);
    this.suggested = options.suggested;
    this.maxBlockRange = options.maxBlockRange;
  }
}

/** 5xx, timeouts, dropped connections, malformed JSON: the next attempt (or the next URL) may work. */
export class TransientRpcError extends RetryableChainError {
  override name = "TransientRpcError";
}

/**
 * The node does not have the data yet ("header not found", "unknown block", or a `null` result for a
 * block we know exists — the caller builds this one itself). Retrying a little later usually works.
 */
export class NotAvailableError extends RetryableChainError {
  override name = "NotAvailableError";
}

/**
 * The provider answered, but with data that contradicts itself or the request (the same log index twice, a
 * receipt of another transaction, a block of another number, a batch answer whose ids do not match the
 * request). Nothing from it is used; another attempt (or another URL) usually answers correctly, and a
 * provider that keeps doing it fails the call after the client's retries.
 */
export class InconsistentDataError extends RetryableChainError {
  override name = "InconsistentDataError";
  /** The block the contradiction concerns, when known. */
  readonly blockNumber: bigint | undefined;

  constructor(shortMessage: string, options: ChainErrorOptions & { blockNumber?: bigint | undefined } = {}) {
    super(shortMessage, options);
    this.blockNumber = options.blockNumber;
  }
}

/** The request itself is wrong or refused for good (method not found, invalid params, 401/403, revert). */
export class FatalRpcError extends NonRetryableChainError {
  override name = "FatalRpcError";
}

/**
 * The chain error classes: the five `classifyRpcError` returns for a failure, and `InconsistentDataError`,
 * which the client itself raises for an answer it refuses.
 */
export type ChainError =
  | RateLimitedError
  | RangeTooLargeError
  | TransientRpcError
  | NotAvailableError
  | InconsistentDataError
  | FatalRpcError;

/** The `outcome` label of `protoscan_rpc_requests_total` for a result or an error. */
export type RpcOutcome =
  | "ok"
  | "rate_limited"
  | "range_too_large"
  | "transient"
  | "not_available"
  | "inconsistent"
  | "fatal";

/** True for an instance of one of the chain error classes. */
export function isChainError(error: unknown): error is ChainError {
  return (
    error instanceof RateLimitedError ||
    error instanceof RangeTooLargeError ||
    error instanceof TransientRpcError ||
    error instanceof NotAvailableError ||
    error instanceof InconsistentDataError ||
    error instanceof FatalRpcError
  );
}

/** The metrics outcome of a classified error. */
export function outcomeOf(error: ChainError): RpcOutcome {
  if (error instanceof RateLimitedError) return "rate_limited";
  if (error instanceof RangeTooLargeError) return "range_too_large";
  if (error instanceof TransientRpcError) return "transient";
  if (error instanceof NotAvailableError) return "not_available";
  if (error instanceof InconsistentDataError) return "inconsistent";
  return "fatal";
}

/**
 * A non-2xx HTTP answer, before classification. Built by the transport so that the classifier sees the
 * status, the `Retry-After` header and the body (which often holds a JSON-RPC error object).
 */
export class HttpStatusError extends BaseError {
  override name = "HttpStatusError";
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;

  constructor(status: number, headers: Headers, body: string) {
    super(`HTTP ${status}`, { details: body.slice(0, 500) });
    this.status = status;
    this.headers = headers;
    this.body = body;
  }
}

/** A 2xx answer whose body is not the JSON-RPC response we asked for (HTML page, truncated JSON, …). */
export class MalformedResponseError extends BaseError {
  override name = "MalformedResponseError";
}
