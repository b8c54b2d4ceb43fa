import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type ActivityEvent, generateTransactions, startActivity } from "./activity.ts";
import { type Anvil, startAnvil } from "./anvil.ts";
import { createDemoClient, type DemoClient } from "./demoClient.ts";
import { type DemoDeployment, deployDemo } from "./deploy.ts";

let anvil: Anvil;
let d: DemoDeployment;
let c: DemoClient;

beforeAll(async () => {
  anvil = await startAnvil();
  d = await deployDemo({ rpcUrl: anvil.url });
  c = createDemoClient(anvil.url);
});
afterAll(() => anvil?.stop());

/** A seeded PRNG (LCG), so a run is reproducible. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("startActivity", () => {
  test("default: mined successful transactions of several kinds within seconds", async () => {
    const events: ActivityEvent[] = [];
    const started = Date.now();
    const activity = startActivity({
      rpcUrl: anvil.url,
      deployment: d,
      intervalMs: 0,
      random: seeded(7),
      onTransaction: (event) => events.push(event),
    });
    while (events.length < 40 && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 50));
    await activity.stop();
    expect(events.length).toBeGreaterThanOrEqual(40);
    expect(Date.now() - started).toBeLessThan(20_000);

    const kinds = new Set(events.map((e) => e.kind));
    expect(kinds.size).toBeGreaterThanOrEqual(5);
    expect(kinds).toContain("swap");
    for (const event of events) {
      expect(d.users).toContain(event.from);
      const receipt = await c.public.getTransactionReceipt({ hash: event.hash });
      expect(receipt.status).toBe("success");
      expect(receipt.blockNumber).toBe(event.blockNumber);
      expect(receipt.from).toBe(event.from);
    }
    // swaps went through the router; vault actions to the vault
    for (const event of events.filter((e) => e.kind === "swap")) {
      expect((await c.public.getTransaction({ hash: event.hash })).to).toBe(d.contracts.router);
    }

    // stopped means stopped
    const head = await c.public.getBlockNumber({ cacheTime: 0 });
    await new Promise((r) => setTimeout(r, 300));
    expect(await c.public.getBlockNumber({ cacheTime: 0 })).toBe(head);
  });

  test("args: intervalMs paces the loop", async () => {
    const events: ActivityEvent[] = [];
    const activity = startActivity({
      rpcUrl: anvil.url,
      deployment: d,
      intervalMs: 400,
      onTransaction: (event) => events.push(event),
    });
    await new Promise((r) => setTimeout(r, 1000));
    await activity.stop();
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events.length).toBeLessThanOrEqual(3);
  });
});

describe("generateTransactions", () => {
  test("default: mines exactly `count` successful transactions", async () => {
    const head = Number(await c.public.getBlockNumber({ cacheTime: 0 }));
    const result = await generateTransactions({ rpcUrl: anvil.url, deployment: d, count: 500, perBlock: 50 });
    expect(result.count).toBe(500);
    expect(result.txHashes).toHaveLength(500);
    expect(new Set(result.txHashes).size).toBe(500);
    expect(result.fromBlock).toBe(head + 1);
    expect(result.toBlock).toBe(head + 10);

    let mined = 0;
    for (let n = result.fromBlock; n <= result.toBlock; n++) {
      const block = await c.public.getBlock({ blockNumber: BigInt(n) });
      expect(block.transactions).toHaveLength(50);
      mined += block.transactions.length;
    }
    expect(mined).toBe(500);
    const receipts = await Promise.all(
      result.txHashes.filter((_, i) => i % 7 === 0).map((hash) => c.public.getTransactionReceipt({ hash })),
    );
    expect(receipts.every((r) => r.status === "success")).toBe(true);
    // the cycle covers transfers, swaps and vault deposits
    const targets = new Set(
      await Promise.all(
        result.txHashes.slice(0, 25).map(async (hash) => (await c.public.getTransaction({ hash })).to),
      ),
    );
    expect(targets).toEqual(
      new Set([d.tokens.DEMO.address, d.tokens.USDC.address, d.contracts.router, d.contracts.vault]),
    );
    // automine is back on
    expect(await c.rpc("anvil_getAutomine")).toBe(true);
  });

  test("args: perBlock larger than a block holds", async () => {
    const result = await generateTransactions({
      rpcUrl: anvil.url,
      deployment: d,
      count: 600,
      perBlock: 600,
    });
    expect(result.count).toBe(600);
    // 600 transactions use ~50M gas: more than one 30M-gas block, so mining goes on until the pool is empty
    expect(result.toBlock).toBeGreaterThan(result.fromBlock);
    const counts = [];
    for (let n = result.fromBlock; n <= result.toBlock; n++) {
      counts.push((await c.public.getBlock({ blockNumber: BigInt(n) })).transactions.length);
    }
    expect(counts.reduce((a, b) => a + b, 0)).toBe(600);
  });
});
