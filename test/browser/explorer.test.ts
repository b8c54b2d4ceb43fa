import type { Browser, BrowserContext, Page } from "playwright-core";
import { createPublicClient, http } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildWeb } from "../../scripts/buildWeb.js";
import { type Protoscan, startProtoscan } from "../../src/cli/startProtoscan.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import {
  hasChromium,
  launchChromium,
  type PageWatch,
  seriousA11yViolations,
  watchedPage,
} from "./browser.ts";

// biome-ignore lint/suspicious/noExplicitAny: API bodies are compared field by field with what the page shows
type Json = Record<string, any>;

/**
 * The web explorer (SPEC §12) in headless Chromium against anvil and one protoscan, like a person: through the
 * `data-testid` hooks and visible text. One browser and one protoscan for the whole file.
 */
if (!hasChromium) {
  process.stderr.write("test/browser: /usr/bin/chromium is missing (apt-get install chromium): skipped\n");
}

describe.skipIf(!hasChromium)("the web explorer in Chromium", () => {
  let chain: DemoChain;
  let db: TestDatabase;
  let protoscan: Protoscan;
  let browser: Browser;
  let context: BrowserContext;
  let base: string;
  const watches: PageWatch[] = [];

  const api = async (path: string): Promise<Json> => {
    const response = await fetch(`${base}${path}`);
    expect(response.status, path).toBe(200);
    return (await response.json()) as Json;
  };
  /** The history endpoints of SPEC §10 may not be on this server yet: their 404 is the chart's error state. */
  const historyMissing = (text: string, url: string) =>
    /status of 404/.test(text) && /\/(history|price-history)(\?|$)/.test(url);
  const open = async (path: string, allow = historyMissing): Promise<Page> => {
    const watch = await watchedPage(context, base, allow);
    watches.push(watch);
    await watch.page.goto(`${base}${path}`);
    return watch.page;
  };
  const expectClean = async (page: Page) => {
    const watch = watches.find((w) => w.page === page)!;
    expect(watch.consoleErrors, "console errors").toEqual([]);
    expect(watch.foreignRequests, "requests to other origins").toEqual([]);
    expect(await seriousA11yViolations(page), "serious or critical axe-core violations").toEqual([]);
  };
  /** Send one demo transaction and wait until protoscan has stored it; the time it was stored. */
  const storeOne = async (): Promise<{ hash: string; storedAt: number }> => {
    const { txHashes } = await generateTransactions({
      rpcUrl: chain.anvil.url,
      deployment: chain.deployment,
      count: 1,
      perBlock: 1,
    });
    const hash = txHashes[0]!;
    for (let i = 0; i < 400; i++) {
      if ((await fetch(`${base}/api/tx/${hash}`)).status === 200) return { hash, storedAt: Date.now() };
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`${hash} was not stored within 10 s`);
  };

  beforeAll(async () => {
    await buildWeb();
    chain = await setupDemoChain({ pollIntervalSeconds: 0.5 });
    await generateTransactions({
      rpcUrl: chain.anvil.url,
      deployment: chain.deployment,
      count: 40,
      perBlock: 4,
    });
    db = await createTestDatabase();
    protoscan = await startProtoscan({
      config: chain.config,
      role: "all",
      host: "127.0.0.1",
      port: 0,
      ...(db.url ? { databaseUrl: db.url } : {}),
      dataDir: "memory://",
      logLevel: "silent",
    });
    base = protoscan.url!;
    const head = Number(await createPublicClient({ transport: http(chain.anvil.url) }).getBlockNumber());
    for (let i = 0; i < 200; i++) {
      const stats = (await (await fetch(`${base}/api/stats`)).json()) as Json;
      if (stats.indexer.indexedBlock >= head) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: "light" });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await protoscan?.stop();
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  test("default: the home page shows every protocol's figures, the indexer, the chart and the latest transactions", async () => {
    const overview = await api("/api/overview");
    const page = await open("/");
    for (const p of overview.protocols) {
      const card = page.locator(`[data-testid="protocol-card"][data-protocol="${p.id}"]`);
      await expect
        .poll(() => card.getByTestId("stat-txcount").getAttribute("title"))
        .toBe(String(p.transactionCount));
      expect(await card.getByTestId("stat-users").getAttribute("title")).toBe(String(p.uniqueUsers));
      expect(await card.getByTestId("stat-tvl").textContent()).toMatch(/^\$/);
      expect(await card.getByTestId("stat-volume").textContent()).toMatch(/^\$/);
      expect(await card.getByRole("link", { name: p.name }).getAttribute("href")).toBe(`/protocol/${p.id}`);
    }
    const feed = page.getByTestId("live-feed");
    await expect.poll(() => feed.getByTestId("tx-row").count()).toBe(25);
    const recent = await api("/api/transactions/recent?limit=25");
    const shown = await feed
      .getByTestId("tx-row")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-tx-hash")));
    expect(shown).toEqual(recent.transactions.map((t: Json) => t.txHash));
    await expect.poll(() => feed.getByText("Live").count()).toBe(1);
    await expect.poll(() => page.getByText("Indexed block").count()).toBe(1);
    // The chart, or (on a server without GET /api/stats/history) its error state.
    await expect
      .poll(
        async () =>
          (await page.getByTestId("chart").count()) +
          (await page.getByText("Could not load the chart").count()),
      )
      .toBe(1);
    await expectClean(page);
  });

  test("default: the home chart draws daily transactions and volume in SPEC §10.3's shape", async () => {
    // Answered in the page with the SPEC's shape, so that the chart is drawn whether or not this server has
    // the history endpoints yet.
    const day = 86_400_000;
    const today = Math.floor(Date.now() / day) * day;
    const points = Array.from({ length: 31 }, (_, i) => ({
      time: new Date(today - (30 - i) * day).toISOString(),
      transactionCount: i * 3,
      uniqueUsers: i,
      volumeUsd: i * 1234.5,
    }));
    const watch = await watchedPage(context, base);
    watches.push(watch);
    const page = watch.page;
    await page.route(/\/api\/stats\/history\?/, (route) =>
      route.fulfill({
        contentType: "application/json",
        body: JSON.stringify({
          interval: "day",
          from: points[0]!.time,
          to: new Date().toISOString(),
          points,
        }),
      }),
    );
    await page.goto(`${base}/`);
    const chart = page.getByTestId("chart");
    await chart.waitFor();
    expect(await chart.getAttribute("data-series")).toBe("transactionCount,volumeUsd");
    expect(await chart.locator("canvas").count()).toBe(1);
    expect(await chart.getByText("Transactions").count()).toBeGreaterThan(0);
    await expectClean(page);
  });

  test("behavior: a transaction stored while the home page is open appears at the top within 2 s", async () => {
    const page = await open("/");
    const feed = page.getByTestId("live-feed");
    await expect.poll(() => feed.getByText("Live").count(), { timeout: 10_000 }).toBe(1);
    const { hash, storedAt } = await storeOne();
    await page
      .locator(`[data-testid="live-feed"] [data-testid="tx-row"][data-tx-hash="${hash}"]`)
      .waitFor({ timeout: 2_000 });
    expect(Date.now() - storedAt).toBeLessThan(2_000);
    expect(await feed.getByTestId("tx-row").first().getAttribute("data-tx-hash")).toBe(hash);
    await expectClean(page);
  });

  test("behavior: with the WebSocket refused the feed says Reconnecting and polls", async () => {
    const watch = await watchedPage(
      context,
      base,
      (text, url) => historyMissing(text, url) || /WebSocket|\/ws/.test(text + url),
    );
    watches.push(watch);
    const page = watch.page;
    await page.routeWebSocket(/\/ws$/, (ws) => ws.close({ code: 1011, reason: "blocked by the test" }));
    await page.goto(`${base}/`);
    const feed = page.getByTestId("live-feed");
    await expect.poll(() => feed.getByText("Reconnecting").count(), { timeout: 10_000 }).toBe(1);
    const { hash } = await storeOne();
    await feed.locator(`[data-testid="tx-row"][data-tx-hash="${hash}"]`).waitFor({ timeout: 5_000 });
    expect(await feed.getByText("Live").count()).toBe(0);
    await page.close();
  });

  test("default: the transaction page shows status, function, protocol, transfers and events", async () => {
    const recent = await api("/api/transactions/recent?limit=50");
    const tx = recent.transactions.find(
      (t: Json) => t.tokenTransfers.length > 0 && t.decodedData.events.length > 0,
    )!;
    const page = await open(`/tx/${tx.txHash}`);
    await expect
      .poll(() => page.getByTestId("tx-status").textContent())
      .toContain(tx.status ? "Success" : "Failed");
    expect(await page.getByTestId("tx-function").textContent()).toBe(tx.functionName);
    expect(await page.getByTestId("tx-protocol").getAttribute("href")).toBe(`/protocol/${tx.protocol}`);
    expect(await page.getByTestId("tx-value-usd").count()).toBe(1);
    const transfers = await page
      .getByTestId("transfer-row")
      .evaluateAll((rows) =>
        rows.map((r) => [r.getAttribute("data-tx-hash"), r.getAttribute("data-log-index")]),
      );
    expect(transfers).toEqual(tx.tokenTransfers.map((t: Json) => [tx.txHash, String(t.logIndex)]));
    expect(await page.getByTestId("event-row").count()).toBe(tx.decodedData.events.length);
    expect(await page.getByText(tx.decodedData.events[0].name, { exact: true }).count()).toBeGreaterThan(0);
    await expectClean(page);
  });

  test("default: the address page shows the balance, token balances and transactions, with CSV links", async () => {
    const user = chain.deployment.users[0]!;
    const view = await api(`/api/address/${user}`);
    const page = await open(`/address/${user}`);
    await expect
      .poll(() => page.getByTestId("address-balance").getAttribute("title"))
      .toContain(`${BigInt(view.balance).toLocaleString("en-US")} wei`);
    const tokens = await page
      .getByTestId("token-balance-row")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-token")));
    expect(tokens).toEqual(view.tokenBalances.map((b: Json) => b.contractAddress));
    const txs = await api(`/api/address/${user}/transactions`);
    await expect
      .poll(() => page.getByTestId("tx-row").first().getAttribute("data-tx-hash"))
      .toBe(txs.transactions[0].txHash);
    expect(await page.getByRole("link", { name: "transactions", exact: true }).getAttribute("href")).toBe(
      `/api/address/${user}/transactions.csv`,
    );
    await expectClean(page);
  });

  test("default: the token page shows the price, holders with shares and transfers", async () => {
    const token = chain.config.tokens[0]!;
    const holders = await api(`/api/tokens/${token.address}/holders`);
    const events = await api(`/api/tokens/${token.address}/events`);
    const page = await open(`/token/${token.address}`);
    await expect.poll(() => page.getByTestId("token-price").count()).toBe(1);
    await expect.poll(() => page.getByTestId("holder-row").count()).toBe(holders.holders.length);
    const shown = await page
      .getByTestId("holder-row")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-address")));
    expect(shown).toEqual(holders.holders.map((h: Json) => h.address));
    await expect
      .poll(() => page.getByTestId("transfer-row").first().getAttribute("data-tx-hash"))
      .toBe(events.events[0].txHash);
    expect(await page.getByText(/top 10: [\d.]+%/).count()).toBe(1);
    await expectClean(page);
  });

  test("default: the protocol page pages its transactions (next-page) and keeps the chart range in the URL", async () => {
    const first = await api("/api/protocol/demoswap/transactions");
    expect(first.nextCursor).not.toBeNull();
    const second = await api(`/api/protocol/demoswap/transactions?cursor=${first.nextCursor}`);
    const page = await open("/protocol/demoswap");
    await expect.poll(() => page.getByTestId("tx-row").count()).toBe(25);
    await page.getByTestId("next-page").click();
    await expect.poll(() => new URL(page.url()).searchParams.get("cursor")).toBe(first.nextCursor);
    await expect
      .poll(() => page.getByTestId("tx-row").first().getAttribute("data-tx-hash"))
      .toBe(second.transactions[0].txHash);
    await page.getByRole("link", { name: "7 d" }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get("range")).toBe("7d");
    await page.reload();
    expect(await page.getByRole("link", { name: "7 d" }).getAttribute("aria-current")).toBe("page");
    const stats = await api("/api/protocol/demoswap/stats");
    await expect
      .poll(() => page.getByTestId("stat-txcount").getAttribute("title"))
      .toBe(String(stats.transactionCount));
    expect(await page.getByText("Router", { exact: true }).count()).toBeGreaterThan(0);
    await expectClean(page);
  });

  test("default: the block page lists the block's stored transactions", async () => {
    const tx = (await api("/api/transactions/recent?limit=1")).transactions[0];
    const block = (await api(`/api/search?q=${tx.blockNumber}`)).results.find(
      (r: Json) => r.type === "block",
    );
    const page = await open(`/block/${tx.blockNumber}`);
    await expect.poll(() => page.getByTestId("tx-row").count()).toBe(block.transactions.length);
    const shown = await page
      .getByTestId("tx-row")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-tx-hash")));
    expect(shown).toEqual(block.transactions);
    await expectClean(page);
  });

  test("default: search by hash, address, block, token and text leads to the page or a list", async () => {
    const tx = (await api("/api/transactions/recent?limit=1")).transactions[0];
    const token = chain.config.tokens[0]!;
    const page = await open("/");
    const search = async (term: string) => {
      await page.getByTestId("search-input").fill(term);
      await page.getByTestId("search-input").press("Enter");
    };
    await search(tx.txHash.toUpperCase().replace("0X", "0x"));
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/tx/${tx.txHash}`);
    await search(chain.deployment.users[1]!);
    await expect
      .poll(() => new URL(page.url()).pathname.toLowerCase())
      .toBe(`/address/${chain.deployment.users[1]!.toLowerCase()}`);
    await search(token.address);
    await expect.poll(() => new URL(page.url()).pathname.toLowerCase()).toBe(`/token/${token.address}`);
    await search(String(tx.blockNumber));
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/block/${tx.blockNumber}`);
    await search("demo");
    await expect.poll(() => new URL(page.url()).pathname).toBe("/search");
    const results = (await api("/api/search?q=demo")).results;
    expect(results.length).toBeGreaterThan(1);
    await expect.poll(() => page.getByTestId("search-results").locator("li").count()).toBe(results.length);
    await page.getByTestId("search-results").getByRole("link").first().click();
    await expect.poll(() => new URL(page.url()).pathname).not.toBe("/search");
    await expectClean(page);
  });

  test("error: unknown paths and unknown hashes show the not-found page", async () => {
    for (const path of ["/no/such/page", `/tx/0x${"0".repeat(64)}`, "/protocol/nothing"]) {
      const page = await open(path, (text, url) => historyMissing(text, url) || /status of 404/.test(text));
      await page.getByTestId("not-found").waitFor();
      await expectClean(page);
      await page.close();
    }
  });

  test("default: both themes: the system's first, the toggle switches and is remembered", async () => {
    const dark = await browser.newContext({ colorScheme: "dark" });
    try {
      const watch = await watchedPage(dark, base, historyMissing);
      const page = watch.page;
      await page.goto(`${base}/`);
      const background = () => page.evaluate("getComputedStyle(document.body).backgroundColor");
      expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("dark");
      const darkBackground = await background();
      expect(await seriousA11yViolations(page)).toEqual([]);
      await page.getByTestId("theme-toggle").click();
      expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("light");
      expect(await background()).not.toBe(darkBackground);
      await page.reload();
      expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("light");
      expect(await seriousA11yViolations(page)).toEqual([]);
      expect(watch.consoleErrors).toEqual([]);
    } finally {
      await dark.close();
    }
  });

  test("default: every page fits 375 px without sideways scrolling and is usable by keyboard", async () => {
    const phone = await browser.newContext({ viewport: { width: 375, height: 800 } });
    try {
      const tx = (await api("/api/transactions/recent?limit=1")).transactions[0];
      const page = (await watchedPage(phone, base, historyMissing)).page;
      for (const path of [
        "/",
        `/tx/${tx.txHash}`,
        `/address/${tx.fromAddress}`,
        `/token/${chain.config.tokens[0]!.address}`,
        "/protocol/demoswap",
        `/block/${tx.blockNumber}`,
        "/nope",
      ]) {
        await page.goto(`${base}${path}`);
        await page.waitForLoadState("networkidle").catch(() => undefined);
        await page.waitForTimeout(300);
        const width = await page.evaluate<number>("document.documentElement.scrollWidth");
        expect(width, path).toBeLessThanOrEqual(375);
      }
      // Keyboard: the first Tab reaches "Skip to content", and the search box takes Enter.
      await page.goto(`${base}/`);
      await page.keyboard.press("Tab");
      expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to content");
      const outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle");
      expect(outline).not.toBe("none");
    } finally {
      await phone.close();
    }
  });
});
