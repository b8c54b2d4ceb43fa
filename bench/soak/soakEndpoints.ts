import { getAddress } from "viem";
import type { DemoDeployment } from "../../src/demo/deploy.ts";

/** What the reads can pick from as the run goes: only hashes protoscan has already broadcast (so indexed). */
export type SoakPools = { indexedHashes: readonly string[]; indexedBlocks: readonly number[] };

/** One kind of read of the mix: its share of the requests, and how to pick the next URL (null: not yet). */
export type SoakEndpoint = {
  key: string;
  label: string;
  /** requests out of every 100 */
  weight: number;
  next(pools: SoakPools, i: number): string | null;
  /** what is wrong with a 200 answer's JSON, or null */
  check?(body: unknown, path: string): string | null;
};

const pick = <T>(list: readonly T[], i: number): T | undefined => list[i % list.length];

/**
 * The read mix of `npm run bench:soak`: the explorer's endpoints (SPEC §4), spread as a site's traffic might
 * be, mostly transaction pages, lists and address views, on live data the indexer writes meanwhile.
 */
export function soakEndpoints(d: DemoDeployment): SoakEndpoint[] {
  const demo = getAddress(d.tokens.DEMO.address);
  const usdc = getAddress(d.tokens.USDC.address);
  const tokens = [demo, usdc];
  const users = d.users.map((u) => getAddress(u));
  const hasArray = (field: string) => (body: unknown) =>
    Array.isArray((body as Record<string, unknown> | null)?.[field]) ? null : `no ${field} array`;
  return [
    {
      key: "tx",
      label: "tx by hash",
      weight: 20,
      next: (p, i) => {
        const hash = pick(p.indexedHashes, i * 7919);
        return hash ? `/api/tx/${hash}` : null;
      },
      check: (body, path) =>
        (body as { txHash?: unknown }).txHash === path.slice("/api/tx/".length)
          ? null
          : "txHash differs from the one asked for",
    },
    {
      key: "recent",
      label: "recent transactions",
      weight: 15,
      next: (_, i) =>
        i % 3 === 0 ? "/api/transactions/recent?protocol=demoswap" : "/api/transactions/recent",
      check: hasArray("transactions"),
    },
    {
      key: "holders",
      label: "token holders",
      weight: 8,
      next: (_, i) => `/api/tokens/${pick(tokens, i)}/holders`,
      check: hasArray("holders"),
    },
    {
      key: "events",
      label: "token events",
      weight: 8,
      next: (_, i) => `/api/tokens/${pick(tokens, i)}/events`,
      check: hasArray("events"),
    },
    {
      key: "address",
      label: "address view",
      weight: 10,
      next: (_, i) => `/api/address/${pick(users, i)}`,
      check: (body) =>
        Array.isArray((body as { tokenBalances?: unknown }).tokenBalances) ? null : "no tokenBalances",
    },
    {
      key: "addressTxs",
      label: "address transactions",
      weight: 10,
      next: (_, i) => `/api/address/${pick(users, i)}/transactions`,
      check: hasArray("transactions"),
    },
    {
      key: "protocolStats",
      label: "protocol stats",
      weight: 8,
      next: (_, i) => `/api/protocol/${i % 2 === 0 ? "demoswap" : "demovault"}/stats`,
      check: (body) => (typeof (body as { tvl?: unknown }).tvl === "number" ? null : "tvl is not a number"),
    },
    {
      key: "overview",
      label: "overview",
      weight: 5,
      next: () => "/api/overview",
      check: hasArray("protocols"),
    },
    {
      key: "search",
      label: "search",
      weight: 8,
      next: (p, i) => {
        const queries = [
          "DEMO",
          "usdc",
          "demo",
          pick(p.indexedHashes, i),
          pick(p.indexedBlocks, i),
          pick(users, i),
        ];
        const q = queries[i % queries.length] ?? "WETH";
        return `/api/search?q=${encodeURIComponent(String(q))}`;
      },
      check: hasArray("results"),
    },
    {
      key: "stats",
      label: "global stats",
      weight: 8,
      next: () => "/api/stats",
      check: (body) =>
        typeof (body as { indexer?: { indexedBlock?: unknown } }).indexer?.indexedBlock === "number"
          ? null
          : "no indexer.indexedBlock",
    },
  ];
}
