import { HttpRequestError, BaseError as ViemBaseError, TimeoutError as ViemTimeoutError } from "viem";
import { walk } from "../internal/errors.ts";
import { isRecord } from "../internal/isRecord.ts";
import { redactSecrets, redactUrl, secretsOfUrl } from "../internal/redact.ts";
import {
  type ChainError,
  FatalRpcError,
  HttpStatusError,
  isChainError,
  MalformedResponseError,
  NotAvailableError,
  RangeTooLargeError,
  RateLimitedError,
  TransientRpcError,
} from "./errors.ts";
import { parseRangeHint } from "./parseRangeHint.ts";
import { parseRetryAfter } from "./parseRetryAfter.ts";

/** Where the failure happened; `url` may hold credentials, it is redacted here. */
export type ClassifyContext = { method?: string | undefined; url?: string | undefined };

// --- Provider messages. This file is the only place in protoscan that matches them. ---

// Rate limits: Alchemy "Your app has exceeded its compute units per second capacity…", Infura -32005
// "project ID request rate exceeded", QuickNode -32007 "10/second request limit reached - reduce calls per
// second…", Base -32016 "over rate limit", proxies quoting "429 Too Many Requests".
const RATE_LIMIT =
  /rate limit|rate-limit|ratelimit|request rate|rate exceeded|too many requests|compute units per second|exceeded its .*capacity|capacity exceeded|(?:requests|calls) per second|request limit reached|daily request count exceeded|over rate limit|quota exceeded|exceeded the quota/i;
const RATE_LIMIT_CODES = new Set([429, -32005, -32007, -32016]);

// eth_getLogs refusals: Alchemy "Log response size exceeded… this block range should work: [0x0, 0x1f3f]",
// Infura -32005 "query returned more than 10000 results. Try with this block range [0x1, 0x2f].",
// QuickNode -32614 "eth_getLogs is limited to a 10,000 range", Ankr "block range is too wide",
// "exceed maximum block range: 5000", Erigon/geth "query timeout exceeded", "response size exceeded"…
const RANGE_TOO_LARGE =
  /query returned more than [\d,]+ results|log response size exceeded|response size (?:exceeded|should not greater than)|response too large|limited to an? [\d,.]+ (?:block )?range|limited to [\d,.]+ blocks?|block range (?:is )?too (?:wide|large)|range (?:is )?too large|max(?:imum)? block range|block range limit exceeded|block range exceeds|block range greater than|max range:|at most [\d,.]+ blocks|blocks distance|too many blocks|query timeout exceeded|query exceeds max results|logs matched by query exceeds limit|exceeds the range allowed|query must be smaller than size|this block range should work|try with this block range|maximum is set to|requested blocks is/i;
const LOG_METHODS = new Set(["eth_getLogs", "eth_newFilter", "eth_getFilterLogs"]);

// The node is behind the block we asked for (geth "header not found", Erigon/Nethermind "unknown block"),
// or a viem action got `null` ("Block at number 5 could not be found", "Transaction receipt with hash …
// could not be found").
const NOT_AVAILABLE =
  /header not found|unknown block|block not found|not yet available|block (?:is )?not available|cannot query unfinalized|beyond (?:the )?current head|after last accepted block|resource not found|could not be found/i;

// Reverts quote contract-supplied text (which could say anything, "rate limit" included): decided first.
const REVERT = /execution reverted|vm execution error|reverted with/i;
const REVERT_CODES = new Set([3]);
// The request is malformed or unsupported: retrying or failing over cannot help.
const EARLY_FATAL_CODES = new Set([-32601, -32700]);
const FATAL_CODES = new Set([-32602, -32600, -32004, -32006]);
const TRANSIENT_CODES = new Set([-32603, -32002]);

const TRANSIENT =
  /timeout|timed out|temporar|try again|service unavailable|bad gateway|gateway time|internal error|econnreset|econnrefused|socket hang up|other side closed|fetch failed|no backend is currently healthy|overloaded|connection (?:reset|closed|refused)/i;
const NETWORK_CODES = /^(?:ECONN|EPIPE|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|UND_ERR)/;

type Facts = {
  status?: number;
  code?: number;
  message?: string;
  data?: unknown;
  retryAfterMs?: number;
  texts: string[];
  network: boolean;
  timeout: boolean;
  malformed: boolean;
};

function readRpcErrorObject(value: unknown, facts: Facts): boolean {
  if (!isRecord(value) || typeof value.code !== "number" || typeof value.message !== "string") return false;
  facts.code ??= value.code;
  facts.message ??= value.message;
  if (value.data !== undefined) facts.data ??= value.data;
  return true;
}

/** An HTTP body: a JSON-RPC response with an `error`, a `{ "error": "text" }`, or plain text/HTML. */
function readBody(body: string, facts: Facts): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const text = body.trim();
    if (text !== "") {
      facts.texts.push(text.slice(0, 300));
      facts.message ??= text.slice(0, 300);
    }
    return;
  }
  const first = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!isRecord(first)) return;
  if (readRpcErrorObject(first.error, facts) || readRpcErrorObject(first, facts)) return;
  const text = typeof first.error === "string" ? first.error : first.message;
  if (typeof text === "string") {
    facts.texts.push(text);
    facts.message ??= text;
  }
}

function collect(error: unknown, facts: Facts, depth: number): void {
  if (depth > 8 || error === null || error === undefined) return;
  if (typeof error === "string") {
    facts.texts.push(error);
    return;
  }
  if (error instanceof HttpStatusError) {
    facts.status ??= error.status;
    const retryAfter = parseRetryAfter(error.headers.get("retry-after"));
    if (retryAfter !== undefined) facts.retryAfterMs ??= retryAfter;
    readBody(error.body, facts);
    return;
  }
  if (error instanceof HttpRequestError) {
    if (error.status !== undefined) facts.status ??= error.status;
    const retryAfter = parseRetryAfter(error.headers?.get("retry-after"));
    if (retryAfter !== undefined) facts.retryAfterMs ??= retryAfter;
    readBody(error.details, facts);
    collect(error.cause, facts, depth + 1);
    return;
  }
  if (error instanceof ViemTimeoutError) facts.timeout = true;
  if (error instanceof MalformedResponseError || error instanceof SyntaxError) facts.malformed = true;
  if (error instanceof ViemBaseError) {
    // viem's `message` quotes the URL and request body; `shortMessage` and `details` (the provider's
    // text) do not.
    if ("code" in error && typeof error.code === "number") facts.code ??= error.code;
    facts.texts.push(error.shortMessage);
    if (typeof error.details === "string") facts.texts.push(error.details);
  } else if (!readRpcErrorObject(error, facts) && isRecord(error)) {
    const code = error.code;
    if (typeof code === "string" && NETWORK_CODES.test(code)) facts.network = true;
    if (code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT") facts.timeout = true;
    if (error.name === "TimeoutError" || error.name === "AbortError") facts.timeout = true;
    if (typeof error.message === "string") facts.texts.push(error.message);
  }
  if (isRecord(error) && "cause" in error) collect(error.cause, facts, depth + 1);
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/** Mask every URL's credentials and every known secret in a free-form text. */
function scrub(text: string, secrets: readonly string[]): string {
  return redactSecrets(
    text.replace(URL_IN_TEXT, (url) => redactUrl(url)),
    secrets,
  );
}

/** A credential-free copy of a cause chain (undici and viem errors may quote the URL). */
function sanitizeCause(error: unknown, secrets: readonly string[], depth = 0): unknown {
  if (depth > 4 || error === undefined || error === null) return undefined;
  if (typeof error === "string") return scrub(error, secrets);
  if (error instanceof Error) {
    const copy = new Error(scrub(error.message, secrets));
    copy.name = error.name;
    copy.stack = `${copy.name}: ${copy.message}`;
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" || typeof code === "number") Object.assign(copy, { code });
    const cause = sanitizeCause(error.cause, secrets, depth + 1);
    if (cause !== undefined) copy.cause = cause;
    return copy;
  }
  try {
    return JSON.parse(scrub(JSON.stringify(error), secrets));
  } catch {
    return undefined;
  }
}

/**
 * Sort any failure of a JSON-RPC call into one of the five chain error classes (see `errors.ts`).
 * This is the ONLY place provider messages are matched; everyone else uses `instanceof`.
 *
 * Accepts what the transport produces (`HttpStatusError`, `MalformedResponseError`, JSON-RPC error
 * objects, undici network errors, timeouts) and viem's own errors. An error that already is (or wraps,
 * through `cause`) a chain error is returned as is, so `classifyRpcError(e)` also works on errors thrown
 * by viem actions (`client.getLogs`, `readContract`, …) called through the chain client.
 *
 * The returned error never contains URL credentials: `context.url` is redacted and its secret parts are
 * scrubbed from every quoted text and from the `cause` chain.
 * @see https://www.jsonrpc.org/specification#error_object
 * @see https://eips.ethereum.org/EIPS/eip-1474#error-codes
 */
export function classifyRpcError(error: unknown, context: ClassifyContext = {}): ChainError {
  const existing = walk(error, isChainError);
  if (existing) return existing;

  const facts: Facts = { texts: [], network: false, timeout: false, malformed: false };
  collect(error, facts, 0);
  const secrets = context.url ? secretsOfUrl(context.url) : [];
  const all = [facts.message ?? "", ...facts.texts].join(" | ");
  const { status, code } = facts;
  const raw = facts.message ?? facts.texts.find((t) => t.trim() !== "") ?? (status ? `HTTP ${status}` : "");
  const providerText = scrub(raw, secrets).slice(0, 500) || "unknown error";
  const where = context.method ?? "RPC request";
  const details = [
    status !== undefined ? `HTTP ${status}` : undefined,
    code !== undefined ? `code ${code}` : undefined,
    context.url ? `url ${redactUrl(context.url)}` : undefined,
  ]
    .filter((part) => part !== undefined)
    .join("; ");
  const options = {
    code,
    status,
    method: context.method,
    url: context.url ? redactUrl(context.url) : undefined,
    data: facts.data,
    cause: sanitizeCause(error, secrets),
    ...(details ? { details } : {}),
  };
  const rateLimited = () =>
    new RateLimitedError(`${where} rate limited: ${providerText}`, {
      ...options,
      retryAfterMs: facts.retryAfterMs,
    });
  const fatal = () => new FatalRpcError(`${where} failed: ${providerText}`, options);
  const transient = () => new TransientRpcError(`${where} failed (transient): ${providerText}`, options);

  if (status === 429 || code === 429) return rateLimited();
  if ((code !== undefined && REVERT_CODES.has(code)) || REVERT.test(all)) return fatal();
  if (code !== undefined && EARLY_FATAL_CODES.has(code)) return fatal();
  if (RANGE_TOO_LARGE.test(all)) {
    // "query timeout exceeded" or "response size exceeded" on another method is not about a block range.
    if (context.method !== undefined && !LOG_METHODS.has(context.method)) return transient();
    return new RangeTooLargeError(`${where} block range too large: ${providerText}`, {
      ...options,
      ...parseRangeHint(raw),
    });
  }
  if ((code !== undefined && RATE_LIMIT_CODES.has(code)) || RATE_LIMIT.test(all)) return rateLimited();
  if (NOT_AVAILABLE.test(all))
    return new NotAvailableError(`${where} not available yet: ${providerText}`, options);
  if (status === 401 || status === 403 || status === 404) return fatal();
  if (code !== undefined && FATAL_CODES.has(code)) return fatal();
  if (status !== undefined && (status >= 500 || status === 408 || status === 425)) return transient();
  if (code !== undefined && TRANSIENT_CODES.has(code)) return transient();
  if (facts.timeout || facts.network || facts.malformed || TRANSIENT.test(all)) return transient();
  return fatal();
}
