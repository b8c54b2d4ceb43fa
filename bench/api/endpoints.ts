import { getAddress } from "viem";
import { BENCH_TOKENS } from "./apiBenchConfig.ts";

/** One measured URL set: requested in turn by every connection. */
export type Endpoint = {
  /** short key for `--only` and the JSON output */
  key: string;
  /** what the table shows */
  label: string;
  paths: string[];
  /** p99 latency target in ms (null for the ceilings) */
  p99TargetMs: number | null;
  /**
   * minimum req/s as a share of the bare `node:http` ceiling of similar body size (null: no such target)
   */
  minCeilingRatio: number | null;
  /**
   * a ceiling, not an API endpoint: a bare `node:http` server (the socket's ceiling) or a bare Fastify route
   * (the framework's) returning a constant body
   */
  ceiling?: "node" | "fastify";
  /** warm up with one pass over `paths` too (a rotation the caches are meant to hold) */
  warmFullRotation?: boolean;
  /**
   * the key of the `node:http` ceiling its `minCeilingRatio` is judged against: measured again right before it
   * in every round, so that both figures of a ratio come from the same minute of a shared machine
   */
  pairedCeiling?: "ceilingNodeTx" | "ceilingNodePage";
};

export const P99_TARGET_MS = 25;
export const CEILING_RATIO_TARGET = 0.5;

/** What the endpoints need from the seeded data. */
export type EndpointInputs = {
  /** transaction hashes to rotate through (fewer than the tx cache keeps: after the warm-up, every one hits) */
  hashes: readonly string[];
  /** every stored hash, a rotation far larger than the tx cache: every request misses it (the cold read) */
  coldHashes: readonly string[];
  /** addresses (holders, senders) to rotate through for the address view */
  addresses: readonly string[];
  /** page 10 of the busiest address's transactions, reached by following nextCursor (fewer on small data) */
  addressPage: { path: string; page: number };
  /** `from` and `to` (unix seconds) spanning 1,000 hourly buckets up to the newest block */
  historyRange: { from: number; to: number };
  /** the busiest address (most transactions): Etherscan's txlist and tokentx read a page of 100 of it */
  busiest: string;
};

/**
 * The endpoints of issue 4 item 6, issue 6 and issue 18 item 4: every listed one must answer p99 <= 25 ms at
 * 50 connections, tx by hash and recent transactions also >= 50% of the bare `node:http` ceiling.
 */
export function apiEndpoints(inputs: EndpointInputs): Endpoint[] {
  const demo = getAddress(BENCH_TOKENS.DEMO.address);
  const listed = (key: string, label: string, paths: string[], ratio: number | null = null): Endpoint => ({
    key,
    label,
    paths,
    p99TargetMs: P99_TARGET_MS,
    minCeilingRatio: ratio,
  });
  return [
    {
      ...listed(
        "tx",
        `tx by hash (${inputs.hashes.length} hashes)`,
        inputs.hashes.map((h) => `/api/tx/${h}`),
        CEILING_RATIO_TARGET,
      ),
      warmFullRotation: true,
      pairedCeiling: "ceilingNodeTx",
    },
    listed(
      "txCold",
      `tx by hash, cold (${inputs.coldHashes.length} hashes, no cache hit)`,
      inputs.coldHashes.map((h) => `/api/tx/${h}`),
    ),
    {
      ...listed("recent", "recent transactions", ["/api/transactions/recent"], CEILING_RATIO_TARGET),
      pairedCeiling: "ceilingNodePage",
    },
    listed("holders0", "holders, offset 0", [`/api/tokens/${demo}/holders`]),
    listed("holders5000", "holders, offset 5000", [`/api/tokens/${demo}/holders?offset=5000`]),
    listed("events", "token events", [`/api/tokens/${demo}/events`]),
    listed("addressTxs", `address transactions, cursor page ${inputs.addressPage.page}`, [
      inputs.addressPage.path,
    ]),
    {
      ...listed(
        "address",
        `address view (${inputs.addresses.length} addresses)`,
        inputs.addresses.map((a) => `/api/address/${a}`),
      ),
      // Measured as a steady rotation: the stored part and the node's figures of each address are cached.
      warmFullRotation: true,
    },
    listed(
      "search",
      "search by symbol",
      ["DEMO", "usdc", "WETH", "rwd"].map((q) => `/api/search?q=${q}`),
    ),
    listed(
      "protocolStats",
      "protocol stats",
      ["demoswap", "demovault"].map((p) => `/api/protocol/${p}/stats`),
    ),
    // Etherscan's API (SPEC §11): a page of 100, oldest first as its clients ask by default.
    listed("etherscanTxlist", "etherscan txlist, page of 100", [
      `/api?module=account&action=txlist&address=${inputs.busiest}&page=1&offset=100`,
    ]),
    listed("etherscanTokentx", "etherscan tokentx, page of 100", [
      `/api?module=account&action=tokentx&address=${inputs.busiest}&page=1&offset=100`,
    ]),
    listed("overview", "overview", ["/api/overview"]),
    // bench/api.ts asks every history URL once first (timed): a bucket's volume is valued once, when first
    // asked for, then served from history_volumes until something it depends on changes (docs/api.md).
    listed(
      "protocolHistory",
      "protocol history, 1,000 hourly buckets",
      ["demoswap", "demovault"].map(
        (p) =>
          `/api/protocol/${p}/history?interval=hour&from=${inputs.historyRange.from}&to=${inputs.historyRange.to}`,
      ),
    ),
    listed("statsHistory", "global history, 1,000 hourly buckets", [
      `/api/stats/history?interval=hour&from=${inputs.historyRange.from}&to=${inputs.historyRange.to}`,
    ]),
    listed("stats", "global stats", ["/api/stats"]),
  ];
}

/**
 * The four ceilings: a bare `node:http` server and a bare Fastify route, each sending a constant body the size
 * of one transaction and of a 25-transaction page (a real response's bytes).
 */
export function ceilingEndpoints(): Endpoint[] {
  const ceiling = (key: string, label: string, path: string, kind: "node" | "fastify"): Endpoint => ({
    key,
    label,
    paths: [path],
    p99TargetMs: null,
    minCeilingRatio: null,
    ceiling: kind,
  });
  return [
    ceiling("ceilingNodeTx", "ceiling: bare node:http, tx-sized body", "/ceiling/tx", "node"),
    ceiling("ceilingNodePage", "ceiling: bare node:http, page-sized body", "/ceiling/page", "node"),
    ceiling("ceilingTx", "ceiling: bare Fastify, tx-sized body", "/ceiling/tx", "fastify"),
    ceiling("ceilingPage", "ceiling: bare Fastify, page-sized body", "/ceiling/page", "fastify"),
  ];
}
