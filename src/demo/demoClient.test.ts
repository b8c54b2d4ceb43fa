import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Anvil, startTestAnvil } from "../../test/helpers/anvil.ts";
import { createDemoClient } from "./demoClient.ts";
import { DEV_ACCOUNTS } from "./devAccounts.ts";

let anvil: Anvil;

beforeAll(async () => {
  // No mining at all: a sent transaction stays in the pool, as one anvil's automine left out does.
  anvil = await startTestAnvil({ noMining: true });
});

afterAll(async () => {
  await anvil?.stop();
});

describe("createDemoClient", () => {
  test("send: a transaction left in the pool gets a block of its own after 5 s, and its receipt comes", async () => {
    const client = createDemoClient(anvil.url);
    const before = await client.public.getBlockNumber();
    const started = Date.now();
    const receipt = await client.send({
      from: DEV_ACCOUNTS[1]!,
      to: DEV_ACCOUNTS[2]!,
      value: 1n,
      gas: 21_000n,
    });
    const waited = Date.now() - started;
    expect(receipt.status).toBe("success");
    expect(receipt.blockNumber).toBe(before + 1n);
    expect(waited).toBeGreaterThanOrEqual(5_000);
    expect(waited).toBeLessThan(30_000);
    const balance = await client.public.getBalance({
      address: DEV_ACCOUNTS[2]!,
      blockNumber: receipt.blockNumber,
    });
    const previous = await client.public.getBalance({ address: DEV_ACCOUNTS[2]!, blockNumber: before });
    expect(balance - previous).toBe(1n);
  });
});
