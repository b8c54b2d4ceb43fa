import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { useTestDatabase } from "../../test/helpers/db.ts";
import { type RpcProxy, startRpcProxy } from "../../test/helpers/rpcProxy.ts";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import { type ChainClient, createChainClient } from "../chain/createChainClient.ts";
import { type Anvil, startAnvil } from "../demo/anvil.ts";
import { blocks } from "../store/schema.ts";
import { ChainMismatchError } from "./errors.ts";
import { findCommonAncestor, REORG_WINDOW_BLOCKS } from "./findCommonAncestor.ts";

type Header = { number: number; hash: string; parentHash: string };

/** A hash no chain has: an orphaned block's. */
const orphan = (n: number): Header => ({
  number: n,
  hash: `0x${n.toString(16).padStart(2, "0").repeat(32)}`,
  parentHash: `0x${"ee".repeat(32)}`,
});

describe("findCommonAncestor", () => {
  const db = useTestDatabase();
  let anvil: Anvil;
  let proxy: RpcProxy;
  let chain: ChainClient;
  /** The chain's headers, by number (blocks 0-12). */
  const canonical = new Map<number, Header>();

  beforeAll(async () => {
    anvil = await startAnvil();
    proxy = await startRpcProxy({ upstream: anvil.url });
    chain = createChainClient(testCommon(testConfig({ urls: [proxy.url] })));
    await chain.request("anvil_mine", ["0xc"]);
    for (let n = 0; n <= 12; n++) {
      const block = await chain.client.getBlock({ blockNumber: BigInt(n) });
      canonical.set(n, {
        number: n,
        hash: block.hash.toLowerCase(),
        parentHash: block.parentHash.toLowerCase(),
      });
    }
  });

  afterAll(async () => {
    await chain?.close();
    await proxy?.close();
    await anvil?.stop();
  });

  beforeEach(async () => {
    await db.database.db.delete(blocks);
    proxy.resetCounts();
  });

  async function store(headers: readonly Header[]): Promise<void> {
    await db.database.db
      .insert(blocks)
      .values(headers.map((h) => ({ ...h, timestamp: new Date(h.number * 1000) })));
  }

  const chainOf = (...numbers: number[]) => numbers.map((n) => canonical.get(n)!);
  const walk = (from: number, cursor = from) =>
    findCommonAncestor(chain, db.database.db, { from, cursor, floor: 0 });

  test("default: stored blocks of one chain below the first canonical one are judged by their parent hash", async () => {
    await store([...chainOf(1, 2, 3, 4, 5, 6, 7, 8), orphan(9), orphan(10)]);
    expect(await walk(10)).toBe(8);
    // 10, 9 and 8 from the chain; 7 down to 1 follow from 8's parent hash.
    expect(proxy.counts.eth_getBlockByNumber).toBe(3);
  });

  test("behavior: sparse stored blocks are read from the chain in one batch", async () => {
    await store([...chainOf(2, 4, 6, 8), orphan(9)]);
    expect(await walk(9)).toBe(8);
    // 9 with 6, 4 and 2 (8 is next to 9: judged by 9's parent hash if 9 were canonical), then 8.
    expect(proxy.counts.eth_getBlockByNumber).toBe(5);
    expect(proxy.batchSizes).toEqual([4, 1]);
  });

  test("behavior: orphans below a canonical block (a webhook's, above a reorg polling missed) are rolled back too", async () => {
    await store([...chainOf(1), orphan(3), orphan(4), ...chainOf(6), orphan(7)]);
    expect(await walk(7)).toBe(1);
  });

  test("behavior: with every stored block orphaned, the block below the oldest", async () => {
    await store([orphan(5), orphan(6), orphan(8)]);
    expect(await walk(8)).toBe(4);
  });

  test("behavior: a stored block that is not its canonical child's parent is an orphan, without a call", async () => {
    const child = canonical.get(6)!;
    await store([...chainOf(1), { ...orphan(5) }, child, orphan(7)]);
    expect(await walk(7)).toBe(1);
    // 7 with 1, then 6; 5 by 6's parent hash
    expect(proxy.counts.eth_getBlockByNumber).toBe(3);
  });

  test("errors: an orphan deeper than the reorg window means another chain", async () => {
    await store([orphan(2), ...chainOf(3, 4)]);
    const error = await walk(4, 2 + REORG_WINDOW_BLOCKS).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChainMismatchError);
    expect((error as Error).message).toContain("block 2");
  });
});
