import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type RpcFault, type RpcProxy, startRpcProxy } from "../../test/helpers/rpcProxy.ts";
import { type Anvil, startAnvil } from "../demo/anvil.ts";
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
import { testCommon, testConfig } from "./_test/testCommon.ts";
import { classifyRpcError } from "./classifyRpcError.ts";
import { type ChainClient, createChainClient } from "./createChainClient.ts";
import {
  type ChainError,
  FatalRpcError,
  NotAvailableError,
  RangeTooLargeError,
  RateLimitedError,
  TransientRpcError,
} from "./errors.ts";

// Every provider message of the classifier's table, served over HTTP by the proxy with its real status and
// body, read back through the whole client (no retries, so the first classification surfaces).

let anvil: Anvil;
let proxy: RpcProxy;
let chain: ChainClient;

beforeAll(async () => {
  anvil = await startAnvil();
  proxy = await startRpcProxy({ upstream: anvil.url });
  chain = createChainClient(testCommon(testConfig({ urls: [proxy.url], timeoutMs: 3_000 })), {
    maxRetries: 0,
  });
});
afterAll(async () => {
  chain?.close();
  await proxy?.close();
  await anvil?.stop();
});
beforeEach(() => {
  proxy.clearFaults();
  proxy.resetCounts();
});

const rpcError = (code: number, message: string): RpcFault => ({
  kind: "rpcError",
  method: "eth_getLogs",
  code,
  message,
});

/** Serve `fault`, call eth_getLogs through viem, and classify what comes out. */
async function served(fault: RpcFault): Promise<ChainError> {
  proxy.inject(fault);
  const error = await chain.client.getLogs({ fromBlock: 0n, toBlock: 0n }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeDefined();
  expect(proxy.counts.eth_getLogs).toBe(1);
  return classifyRpcError(error);
}

describe("provider errors served over HTTP", () => {
  test("default: a healthy call passes", async () => {
    expect(await chain.client.getLogs({ fromBlock: 0n, toBlock: 0n })).toEqual([]);
  });

  test("args: Alchemy HTTP 429", async () => {
    const error = await served({ kind: "http", status: 429, body: ALCHEMY_RATE_BODY });
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.status).toBe(429);
    expect(error.shortMessage).toBe(`eth_getLogs rate limited: ${ALCHEMY_RATE}`);
  });

  test("args: Alchemy code 429 inside a 200 response", async () => {
    expect(await served(rpcError(429, ALCHEMY_RATE))).toBeInstanceOf(RateLimitedError);
  });

  test("args: HTTP 429 with Retry-After", async () => {
    const error = await served({
      kind: "http",
      status: 429,
      headers: { "Retry-After": "7" },
      body: "Too Many Requests",
    });
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBe(7000);
  });

  test("args: Alchemy -32602 log response size with a suggested range", async () => {
    const error = await served(rpcError(-32602, ALCHEMY_LOGS));
    expect(error).toBeInstanceOf(RangeTooLargeError);
    expect((error as RangeTooLargeError).suggested).toEqual({ fromBlock: 0n, toBlock: 0x1f3fn });
  });

  test("args: Infura -32005 too many results is a range error", async () => {
    const error = await served(rpcError(-32005, INFURA_LOGS));
    expect(error).toBeInstanceOf(RangeTooLargeError);
    expect((error as RangeTooLargeError).suggested).toEqual({ fromBlock: 1n, toBlock: 0x2fn });
  });

  test("args: Infura -32005 request rate is a rate limit", async () => {
    expect(await served(rpcError(-32005, INFURA_RATE))).toBeInstanceOf(RateLimitedError);
  });

  test("args: QuickNode -32614 and -32007", async () => {
    const range = await served(rpcError(-32614, QUICKNODE_RANGE));
    expect(range).toBeInstanceOf(RangeTooLargeError);
    expect((range as RangeTooLargeError).maxBlockRange).toBe(10_000);
    proxy.clearFaults();
    proxy.resetCounts();
    expect(await served(rpcError(-32007, QUICKNODE_RATE))).toBeInstanceOf(RateLimitedError);
  });

  test("args: -32016 and a quoted 429", async () => {
    expect(await served(rpcError(-32016, BASE_RATE))).toBeInstanceOf(RateLimitedError);
    proxy.clearFaults();
    proxy.resetCounts();
    expect(await served(rpcError(-32000, BASE_RATE_QUOTED))).toBeInstanceOf(RateLimitedError);
  });

  test.each([
    ["block range is too wide", -32600],
    ["exceed maximum block range: 5000", -32000],
    ["query timeout exceeded", -32000],
    ["response size exceeded", -32000],
  ])("args: range message %j", async (message, code) => {
    expect(await served(rpcError(code, message))).toBeInstanceOf(RangeTooLargeError);
  });

  test.each([
    [{ kind: "http", status: 500, body: "Internal Server Error" }],
    [{ kind: "http", status: 502, body: "<html><body>502 Bad Gateway</body></html>" }],
    [{ kind: "http", status: 503, body: "Service Unavailable" }],
    [{ kind: "malformed" }],
    [{ kind: "drop" }],
    [{ kind: "timeout" }],
  ] as [RpcFault][])("args: transient %j", async (fault) => {
    expect(await served(fault)).toBeInstanceOf(TransientRpcError);
  });

  test("args: not available yet", async () => {
    expect(await served(rpcError(-32000, "header not found"))).toBeInstanceOf(NotAvailableError);
    proxy.clearFaults();
    proxy.resetCounts();
    expect(await served(rpcError(-32000, "unknown block"))).toBeInstanceOf(NotAvailableError);
  });

  test.each([
    [rpcError(-32601, "the method eth_getLogs does not exist/is not available")],
    [rpcError(-32602, "invalid argument 0: hex string without 0x prefix")],
    [{ kind: "http", status: 401, body: "Must be authenticated!" }],
    [
      {
        kind: "http",
        status: 403,
        body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"rejected"}}',
      },
    ],
  ] as [RpcFault][])("error: fatal %j", async (fault) => {
    expect(await served(fault)).toBeInstanceOf(FatalRpcError);
  });
});
