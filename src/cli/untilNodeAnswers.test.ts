import { afterAll, beforeAll, beforeEach, expect, test, vi } from "vitest";
import { type RpcProxy, startRpcProxy } from "../../test/helpers/rpcProxy.ts";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import { classifyRpcError } from "../chain/classifyRpcError.ts";
import { type ChainClient, createChainClient } from "../chain/createChainClient.ts";
import { FatalRpcError } from "../chain/errors.ts";
import { type Anvil, startAnvil } from "../demo/anvil.ts";
import { ConfigError } from "../internal/errors.ts";
import { createLogger } from "../internal/logger.ts";
import { untilNodeAnswers } from "./untilNodeAnswers.ts";

let anvil: Anvil;
let proxy: RpcProxy;
let chain: ChainClient;
const FAST = { baseMs: 10, maxMs: 40 };

beforeAll(async () => {
  anvil = await startAnvil();
  proxy = await startRpcProxy({ upstream: anvil.url });
  // No retries inside the client: every failure reaches untilNodeAnswers.
  chain = createChainClient(testCommon(testConfig({ urls: [proxy.url] })), { maxRetries: 0 });
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

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: "info",
    destination: { write: (l: string) => lines.push(JSON.parse(l)) },
  });
  return { logger, lines };
}

test("default: rate limits and outages at start-up are waited out, each logged, and the answer returned", async () => {
  const { logger, lines } = capture();
  proxy.inject({ kind: "http", status: 429, body: "Too Many Requests", times: 2 });
  proxy.inject({ kind: "http", status: 503, body: "Service Unavailable", times: 1 });
  const id = await untilNodeAnswers(logger, "the chain id check", () => chain.getChainId(), {
    backoff: FAST,
    random: () => 1,
  });
  expect(id).toBe(31337);
  expect(proxy.counts.eth_chainId).toBe(4);
  const warnings = lines.filter((l) => l.level === 40);
  expect(warnings.map((l) => [l.msg, l.attempt, l.retryInMs])).toEqual([
    ["start-up: the node did not answer the chain id check; retrying", 1, 10],
    ["start-up: the node did not answer the chain id check; retrying", 2, 20],
    ["start-up: the node did not answer the chain id check; retrying", 3, 40],
  ]);
});

test("error: what waiting cannot change fails at once", async () => {
  const { logger, lines } = capture();
  proxy.inject({ kind: "http", status: 401, body: "Must be authenticated!" });
  const refused = await untilNodeAnswers(logger, "the chain id check", () => chain.getChainId(), {
    backoff: FAST,
  }).catch((e: unknown) => e);
  expect(classifyRpcError(refused)).toBeInstanceOf(FatalRpcError);
  expect(proxy.counts.eth_chainId).toBe(1);
  proxy.clearFaults();
  const wrongChain = await untilNodeAnswers(logger, "the chain id check", () => chain.assertChainId(1), {
    backoff: FAST,
  }).catch((e: unknown) => e);
  expect(wrongChain).toBeInstanceOf(ConfigError);
  const bug = await untilNodeAnswers(
    logger,
    "a check",
    () => Promise.reject(new TypeError("x is undefined")),
    { backoff: FAST },
  ).catch((e: unknown) => e);
  expect(bug).toBeInstanceOf(TypeError); // a bug is not mistaken for the node
  expect(lines.filter((l) => l.level === 40)).toEqual([]);
});

test("behavior: an abort ends the wait for a node that does not answer, with its reason", async () => {
  const { logger, lines } = capture();
  proxy.inject({ kind: "http", status: 503, body: "Service Unavailable", times: 1000 });
  const stopping = new AbortController();
  const reason = new Error("SIGTERM during the start-up");
  const waiting = untilNodeAnswers(logger, "the chain id check", () => chain.getChainId(), {
    backoff: { baseMs: 60_000, maxMs: 60_000 },
    random: () => 1,
    signal: stopping.signal,
  }).catch((e: unknown) => e);
  await vi.waitFor(() => expect(lines.filter((l) => l.level === 40)).toHaveLength(1));
  stopping.abort(reason);
  expect(await waiting).toBe(reason);
  expect(proxy.counts.eth_chainId).toBe(1);
  // Aborted before it starts: not even one call.
  const before = await untilNodeAnswers(logger, "x", () => chain.getChainId(), {
    backoff: FAST,
    random: () => 1,
    signal: stopping.signal,
  }).catch((e: unknown) => e);
  expect(before).toBe(reason);
  expect(proxy.counts.eth_chainId).toBe(1);
});
