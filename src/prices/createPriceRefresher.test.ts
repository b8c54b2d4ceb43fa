import { expect, test, vi } from "vitest";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import type { Config } from "../config/schema.ts";
import type { PriceEngine } from "./createPriceEngine.ts";
import { createPriceRefresher } from "./createPriceRefresher.ts";

function configWith(cacheSeconds: number): Config {
  const config = testConfig({ urls: ["http://127.0.0.1:8545"] });
  const token = {
    address: "0x00000000000000000000000000000000000000a1" as const,
    symbol: "T",
    name: "T",
    decimals: 18,
    protocol: "p",
    color: "#888888",
    logo: "",
    official: false,
    exclusive: false,
  };
  return { ...config, prices: { cacheSeconds }, tokens: [token] };
}

/** A price engine that counts refreshes (the engine itself is tested in createPriceEngine.test.ts). */
function countingEngine(fail = false): PriceEngine & { refreshes: number } {
  const engine = {
    refreshes: 0,
    priceOf: async () => null,
    pricesOf: async () => new Map(),
    async refreshAll() {
      engine.refreshes++;
      if (fail) throw new Error("boom");
      return new Map();
    },
  };
  return engine;
}

test("default: a refresh at start, then one every cacheSeconds until stopped", async () => {
  const prices = countingEngine();
  const refresher = createPriceRefresher(testCommon(configWith(0.05)), { prices });
  refresher.start();
  refresher.start();
  expect(prices.refreshes).toBe(1);
  await vi.waitFor(() => expect(prices.refreshes).toBeGreaterThanOrEqual(3), { timeout: 5000 });
  await refresher.stop();
  const stoppedAt = prices.refreshes;
  await new Promise((resolve) => setTimeout(resolve, 150));
  expect(prices.refreshes).toBe(stoppedAt);
});

test("behavior: a failing refresh is logged, never thrown, and the next one still runs", async () => {
  const prices = countingEngine(true);
  const refresher = createPriceRefresher(testCommon(configWith(0.02)), { prices });
  await expect(refresher.refresh()).resolves.toBeUndefined();
  refresher.start();
  await vi.waitFor(() => expect(prices.refreshes).toBeGreaterThanOrEqual(3), { timeout: 5000 });
  await refresher.stop();
});

test("args: cacheSeconds 0 refreshes once at start (nothing is cached to keep warm)", async () => {
  const prices = countingEngine();
  const refresher = createPriceRefresher(testCommon(configWith(0)), { prices });
  refresher.start();
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(prices.refreshes).toBe(1);
  await refresher.stop();
});
