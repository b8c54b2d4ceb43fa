import {
  BlockNotFoundError,
  HttpRequestError,
  InvalidParamsRpcError,
  TransactionReceiptNotFoundError,
  TimeoutError as ViemTimeoutError,
} from "viem";
import { describe, expect, test } from "vitest";
import { NonRetryableError, RetryableError } from "../internal/errors.ts";
import {
  ALCHEMY_LOGS,
  ALCHEMY_RATE,
  ALCHEMY_RATE_BODY,
  BASE_RATE,
  BASE_RATE_QUOTED,
  INFURA_LOGS,
  INFURA_RATE,
  QUICKNODE_RANGE,
  QUICKNODE_RATE,
} from "./_test/providerMessages.ts";
import { classifyRpcError } from "./classifyRpcError.ts";
import {
  FatalRpcError,
  HttpStatusError,
  MalformedResponseError,
  NotAvailableError,
  RangeTooLargeError,
  RateLimitedError,
  TransientRpcError,
} from "./errors.ts";

const rpc = (code: number, message: string, data?: unknown) => ({ code, message, ...(data ? { data } : {}) });
const http = (status: number, body = "", headers: Record<string, string> = {}) =>
  new HttpStatusError(status, new Headers(headers), body);
const logs = { method: "eth_getLogs" };

describe("classifyRpcError", () => {
  test("default: Alchemy HTTP 429", () => {
    const error = classifyRpcError(http(429, ALCHEMY_RATE_BODY));
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toBeInstanceOf(RetryableError);
    expect(error.status).toBe(429);
    expect(error.code).toBe(429);
    expect(error.shortMessage).toBe(`RPC request rate limited: ${ALCHEMY_RATE}`);
  });

  test("args: Alchemy code 429 inside a 200 batch", () => {
    expect(classifyRpcError(rpc(429, ALCHEMY_RATE), logs)).toBeInstanceOf(RateLimitedError);
  });

  test("args: Alchemy getLogs -32602 with a suggested range", () => {
    const error = classifyRpcError(rpc(-32602, ALCHEMY_LOGS), logs);
    expect(error).toBeInstanceOf(RangeTooLargeError);
    expect(error).toBeInstanceOf(NonRetryableError);
    expect((error as RangeTooLargeError).suggested).toEqual({ fromBlock: 0n, toBlock: 0x1f3fn });
    expect(error.shortMessage).toBe(`eth_getLogs block range too large: ${ALCHEMY_LOGS}`);
  });

  test("args: Infura -32005 too many results (range)", () => {
    const error = classifyRpcError(rpc(-32005, INFURA_LOGS), logs);
    expect(error).toBeInstanceOf(RangeTooLargeError);
    expect((error as RangeTooLargeError).suggested).toEqual({ fromBlock: 1n, toBlock: 47n });
  });

  test("args: Infura -32005 request rate (same code, rate limit)", () => {
    const error = classifyRpcError(rpc(-32005, INFURA_RATE), logs);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.code).toBe(-32005);
  });

  test("args: QuickNode -32614 range limit", () => {
    const error = classifyRpcError(rpc(-32614, QUICKNODE_RANGE), logs);
    expect(error).toBeInstanceOf(RangeTooLargeError);
    expect((error as RangeTooLargeError).maxBlockRange).toBe(10_000);
    expect((error as RangeTooLargeError).suggested).toBeUndefined();
  });

  test("args: QuickNode -32007 request limit", () => {
    expect(classifyRpcError(rpc(-32007, QUICKNODE_RATE))).toBeInstanceOf(RateLimitedError);
  });

  test("args: -32016 over rate limit, also quoted inside a -32000", () => {
    expect(classifyRpcError(rpc(-32016, BASE_RATE))).toBeInstanceOf(RateLimitedError);
    expect(classifyRpcError(rpc(-32000, BASE_RATE_QUOTED))).toBeInstanceOf(RateLimitedError);
  });

  test("args: other range messages", () => {
    expect(classifyRpcError(rpc(-32600, "block range is too wide"), logs)).toBeInstanceOf(RangeTooLargeError);
    const max = classifyRpcError(rpc(-32000, "exceed maximum block range: 5000"), logs);
    expect(max).toBeInstanceOf(RangeTooLargeError);
    expect((max as RangeTooLargeError).maxBlockRange).toBe(5000);
    expect(classifyRpcError(rpc(-32000, "query timeout exceeded"), logs)).toBeInstanceOf(RangeTooLargeError);
    expect(classifyRpcError(rpc(-32000, "response size exceeded"), logs)).toBeInstanceOf(RangeTooLargeError);
    expect(classifyRpcError(rpc(-32000, "Block range is too large"), logs)).toBeInstanceOf(
      RangeTooLargeError,
    );
  });

  test("behavior: a range-looking timeout on another method is transient", () => {
    const error = classifyRpcError(rpc(-32000, "query timeout exceeded"), { method: "eth_call" });
    expect(error).toBeInstanceOf(TransientRpcError);
  });

  test("args: HTTP 429 with Retry-After in seconds and as a date", () => {
    const seconds = classifyRpcError(http(429, "Too Many Requests", { "retry-after": "2" }));
    expect(seconds).toBeInstanceOf(RateLimitedError);
    expect((seconds as RateLimitedError).retryAfterMs).toBe(2000);
    const date = new Date(Date.now() + 5000).toUTCString();
    const dated = classifyRpcError(http(429, "", { "retry-after": date })) as RateLimitedError;
    expect(dated.retryAfterMs).toBeGreaterThan(3000);
    expect(dated.retryAfterMs).toBeLessThanOrEqual(5000);
  });

  test("args: 5xx, timeouts, dropped connections and malformed JSON are transient", () => {
    expect(classifyRpcError(http(500, "Internal Server Error"))).toBeInstanceOf(TransientRpcError);
    expect(classifyRpcError(http(502, "<html>502 Bad Gateway</html>"))).toBeInstanceOf(TransientRpcError);
    const unavailable = classifyRpcError(http(503, "Service Unavailable"));
    expect(unavailable).toBeInstanceOf(TransientRpcError);
    expect(unavailable.shortMessage).toBe("RPC request failed (transient): Service Unavailable");
    expect(
      classifyRpcError(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ).toBeInstanceOf(TransientRpcError);
    const refused = Object.assign(new TypeError("fetch failed"), {
      cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
    });
    expect(classifyRpcError(refused)).toBeInstanceOf(TransientRpcError);
    const dropped = Object.assign(new TypeError("fetch failed"), {
      cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
    });
    expect(classifyRpcError(dropped)).toBeInstanceOf(TransientRpcError);
    expect(classifyRpcError(new MalformedResponseError("response is not JSON"))).toBeInstanceOf(
      TransientRpcError,
    );
    expect(classifyRpcError(new SyntaxError("Unexpected end of JSON input"))).toBeInstanceOf(
      TransientRpcError,
    );
    expect(classifyRpcError(rpc(-32603, "internal error"))).toBeInstanceOf(TransientRpcError);
  });

  test("args: block not available yet", () => {
    expect(classifyRpcError(rpc(-32000, "header not found"))).toBeInstanceOf(NotAvailableError);
    expect(classifyRpcError(rpc(-32000, "unknown block"))).toBeInstanceOf(NotAvailableError);
    expect(
      classifyRpcError(rpc(-32602, "block range extends beyond current head block"), logs),
    ).toBeInstanceOf(NotAvailableError);
  });

  test("args: a viem action that got null", () => {
    expect(classifyRpcError(new BlockNotFoundError({ blockNumber: 5n }))).toBeInstanceOf(NotAvailableError);
    const hash = `0x${"ab".repeat(32)}` as const;
    expect(classifyRpcError(new TransactionReceiptNotFoundError({ hash }))).toBeInstanceOf(NotAvailableError);
  });

  test("args: fatal errors", () => {
    const missing = classifyRpcError(rpc(-32601, "the method eth_foo does not exist/is not available"));
    expect(missing).toBeInstanceOf(FatalRpcError);
    expect(classifyRpcError(rpc(-32602, "invalid argument 0: hex string without 0x prefix"))).toBeInstanceOf(
      FatalRpcError,
    );
    const unauthorized = classifyRpcError(http(401, "Must be authenticated!"));
    expect(unauthorized).toBeInstanceOf(FatalRpcError);
    expect(unauthorized.status).toBe(401);
    expect(
      classifyRpcError(http(403, '{"jsonrpc":"2.0","error":{"code":-32002,"message":"rejected"}}')),
    ).toBeInstanceOf(FatalRpcError);
  });

  test("behavior: a revert keeps code and data, even when its reason says 'rate limit'", () => {
    const error = classifyRpcError(rpc(3, "execution reverted: rate limit", "0x08c379a0"));
    expect(error).toBeInstanceOf(FatalRpcError);
    expect(error.code).toBe(3);
    expect(error.data).toBe("0x08c379a0");
  });

  test("behavior: viem errors are read through details and cause", () => {
    const viemHttp = new HttpRequestError({
      url: "http://127.0.0.1:1",
      status: 429,
      headers: new Headers({ "retry-after": "1" }),
      details: JSON.stringify({ code: 429, message: ALCHEMY_RATE }),
    });
    const rate = classifyRpcError(viemHttp);
    expect(rate).toBeInstanceOf(RateLimitedError);
    expect((rate as RateLimitedError).retryAfterMs).toBe(1000);
    expect(classifyRpcError(new ViemTimeoutError({ body: {}, url: "http://127.0.0.1:1" }))).toBeInstanceOf(
      TransientRpcError,
    );
  });

  test("behavior: an already classified error is found through wrappers", () => {
    const inner = new RateLimitedError("eth_call rate limited: x", { code: -32005 });
    const wrapped = new InvalidParamsRpcError(inner);
    expect(classifyRpcError(wrapped)).toBe(inner);
    expect(classifyRpcError(inner)).toBe(inner);
  });

  test("behavior: credentials never reach the error", () => {
    const url = "http://user:s3cretpass@127.0.0.1:8545/v2/abcdefghijklmnopqrstuvwxyz012345";
    const cause = Object.assign(new TypeError(`fetch failed for ${url}`), {
      cause: new Error(`connect ECONNREFUSED via ${url}`),
    });
    const error = classifyRpcError(cause, { method: "eth_blockNumber", url });
    expect(error).toBeInstanceOf(TransientRpcError);
    expect(error.url).toBe("http://***@127.0.0.1:8545/v2/***");
    const everything = JSON.stringify({
      message: error.message,
      stack: error.stack,
      details: error.details,
      cause: String(error.cause),
      causeCause: String((error.cause as Error).cause),
      url: error.url,
    });
    expect(everything).not.toContain("s3cretpass");
    expect(everything).not.toContain("abcdefghijklmnopqrstuvwxyz012345");
    expect(everything).not.toContain("user:");
  });

  test("error: unknown failure is fatal", () => {
    expect(classifyRpcError(new Error("something odd"))).toBeInstanceOf(FatalRpcError);
    expect(classifyRpcError(rpc(-32000, "missing trie node"))).toBeInstanceOf(FatalRpcError);
    expect(classifyRpcError(undefined).shortMessage).toBe("RPC request failed: unknown error");
  });
});
