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
  /** minimum req/s as a share of the ceiling of similar body size (null: no such target) */
  minCeilingRatio: number | null;
  /** a bare Fastify route returning a constant body: the framework ceiling */
  ceiling?: boolean;
  /** warm up with one pass over `paths` too (a rotation the caches are meant to hold) */
  warmFullRotation?: boolean;
};

export const P99_TARGET_MS = 25;
export const CEILING_RATIO_TARGET = 0.5;

/** What the endpoints need from the seeded data. */
export type EndpointInputs = {
  /** transaction hashes to rotate through (as many as the tx cache keeps: after the warm-up, every one hits) */
  hashes: readonly string[];
  /** every stored hash, in a rotation ten times the tx cache: every request misses it (the cold read) */
  coldHashes: readonly string[];
  /** addresses (holders, senders) to rotate through for the address view */
  addresses: readonly string[];
  /** page 10 of the busiest address's transactions, reached by following nextCursor (fewer on small data) */
  addressPage: { path: string; page: number };
  /** the busiest address (most transactions): Etherscan's txlist and tokentx read a page of 100 of it */
  busiest: string;
};

/**
 * The endpoints of issue 4 item 6 and issue 6: every listed one must answer p99 <= 25 ms at 50 connections,
 * tx by hash and recent transactions also >= 50% of the framework ceiling.
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
    },
    listed(
      "txCold",
      `tx by hash, cold (${inputs.coldHashes.length} hashes, no cache hit)`,
      inputs.coldHashes.map((h) => `/api/tx/${h}`),
    ),
    listed("recent", "recent transactions", ["/api/transactions/recent"], CEILING_RATIO_TARGET),
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
    listed("stats", "global stats", ["/api/stats"]),
  ];
}

/** The two framework ceilings: constant bodies the size of one transaction and of a 25-transaction page. */
export function ceilingEndpoints(): Endpoint[] {
  const ceiling = (key: string, label: string, path: string): Endpoint => ({
    key,
    label,
    paths: [path],
    p99TargetMs: null,
    minCeilingRatio: null,
    ceiling: true,
  });
  return [
    ceiling("ceilingTx", "ceiling: bare Fastify, tx-sized body", "/ceiling/tx"),
    ceiling("ceilingPage", "ceiling: bare Fastify, page-sized body", "/ceiling/page"),
  ];
}
