import { eq, inArray } from "drizzle-orm";
import { erc20Abi, parseEther, parseUnits } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveConfig } from "../../src/config/resolveConfig.ts";
import type { Address } from "../../src/config/schema.ts";
import type { DemoDeployment, DemoTokenSymbol } from "../../src/demo/deploy.ts";
import { deltaTokensOf } from "../../src/ingest/_test/balances.ts";
import type { IngestEvent } from "../../src/ingest/broadcaster.ts";
import { fetchTransactionsByHash } from "../../src/ingest/fetchTransactionsByHash.ts";
import type { Db } from "../../src/store/createDatabase.ts";
import { CURSOR_NAME, getCursor } from "../../src/store/indexerState.ts";
import { tokenBalances, transactions } from "../../src/store/schema.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import {
  nativeTransfer,
  ownerMint,
  swapExact,
  tokenTransfer,
  vaultClaim,
  vaultDeposit,
} from "../helpers/demoTxs.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import {
  type ChainBlock,
  mineBlock,
  type ReorgPlacement,
  rawTransaction,
  readBlocks,
  reorgChain,
  sendRawTransaction,
  startHookProxy,
} from "../helpers/reorg.ts";
import { verifyStoreAgainstChain } from "../helpers/verifyStore.ts";

const SYMBOLS: readonly DemoTokenSymbol[] = ["DEMO", "USDC", "WETH", "RWD"];

type TxRef = { hash: string; blockNumber: number; blockHash: string };

/** `removed` and `transaction` events as (hash, block number, block hash), in broadcast order. */
function eventRefs(events: readonly IngestEvent[]) {
  const removed: TxRef[] = [];
  const added: TxRef[] = [];
  const order: ("removed" | "transaction")[] = [];
  for (const e of events) {
    order.push(e.type);
    if (e.type === "removed") {
      const { hash, blockNumber, blockHash } = e.removed;
      removed.push({ hash, blockNumber, blockHash });
    } else {
      const t = e.transaction;
      added.push({
        hash: t.hash.toLowerCase(),
        blockNumber: t.blockNumber,
        blockHash: t.blockHash.toLowerCase(),
      });
    }
  }
  return { removed, added, order };
}

/** Every transaction of `blocks` as the chain has it, in block order. */
function refsOf(blocks: readonly ChainBlock[]): TxRef[] {
  return blocks.flatMap((b) =>
    b.transactions.map((hash) => ({ hash, blockNumber: b.number, blockHash: b.hash })),
  );
}

const byHash = (a: TxRef, b: TxRef) => a.hash.localeCompare(b.hash);

/** The balance cache, keyed `token:holder`. */
async function storedBalances(db: Db): Promise<Map<string, bigint>> {
  const rows = await db.select().from(tokenBalances);
  return new Map(rows.map((r) => [`${r.tokenAddress}:${r.holder}`, r.balance]));
}

describe("reorgs while indexing (anvil_reorg)", () => {
  let chain: DemoChain;
  let d: DemoDeployment;
  let url: string;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let users: Address[];

  beforeAll(async () => {
    chain = await setupDemoChain();
    d = chain.deployment;
    url = chain.anvil.url;
    users = d.users;
    // Every user stakes DEMO, so that vault claims pay RWD (a call-mode token) in the blocks below.
    await mineBlock(
      url,
      users.map((u) => vaultDeposit(d, u, parseUnits("1000", 18))),
    );
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config: chain.config, database: db.database });
    await pipeline.catchUp();
  });

  afterAll(async () => {
    await pipeline?.close();
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  const tokenAddress = (symbol: DemoTokenSymbol) => d.tokens[symbol].address;

  /** Index, then assert the store equals the chain up to the indexed block. */
  async function catchUpAndVerify(p: TestPipeline = pipeline, database: Db = db.database.db) {
    const indexed = await p.catchUp();
    const problems = await verifyStoreAgainstChain({
      rpcUrl: url,
      db: database,
      config: p.common.config,
      fromBlock: p.common.config.indexer.startBlock,
      toBlock: indexed,
    });
    expect(problems).toEqual([]);
    return indexed;
  }

  /** Cached balances equal balanceOf at `block` for every key given. */
  async function expectBalancesOnChain(keys: Iterable<string>, block: number) {
    const cached = await storedBalances(db.database.db);
    for (const key of keys) {
      const [token, holder] = key.split(":") as [Address, Address];
      const onChain = await pipeline.chain.client.readContract({
        address: token,
        abi: erc20Abi,
        functionName: "balanceOf",
        args: [holder],
        blockNumber: BigInt(block),
      });
      expect({ key, balance: cached.get(key) ?? 0n }).toEqual({ key, balance: onChain });
    }
  }

  test("default: DEMO and USDC balances are kept by deltas, WETH and RWD by balanceOf", async () => {
    // The reorg tests below restore both kinds; this guards the assumption they rely on.
    const deltaTokens = await deltaTokensOf(chain.config, pipeline.chain, db.database.db);
    const delta = SYMBOLS.filter((s) => deltaTokens.has(tokenAddress(s)));
    expect(delta).toEqual(["DEMO", "USDC"]);
  });

  test.each([1, 3, 5])("behavior: reorg depth %i", async (depth) => {
    // The window: `depth` blocks of protocol activity touching all four tokens; the deployer's USDC mint
    // (the transaction that will move) is the last one of the last block.
    const original: ChainBlock[] = [];
    for (let k = 0; k < depth; k++) {
      const [a, b, c, e] = [0, 1, 2, 3].map((i) => users[(k + i) % users.length]!) as [
        Address,
        Address,
        Address,
        Address,
      ];
      const txs = [
        tokenTransfer(d, "DEMO", a, b, parseUnits(String(k + 1), 18)),
        swapExact(d, c, ["WETH", "USDC"], parseEther("0.1") * BigInt(k + 1)),
        vaultClaim(d, e),
      ];
      if (k === depth - 1) txs.push(ownerMint(d, "USDC", b, parseUnits("777", 6)));
      original.push(await mineBlock(url, txs));
    }
    await catchUpAndVerify();
    const balancesBefore = await storedBalances(db.database.db);
    const moved = original.at(-1)!.transactions.at(-1)!;
    const raw = await rawTransaction(url, moved);

    // (a) every user transaction of the window is dropped; (b) different transfers from the same users
    // take their place; (c) the mint is mined again, unchanged, in another block.
    const placements: ReorgPlacement[] = [
      { tx: { request: swapExact(d, users[2]!, ["USDC", "WETH"], parseUnits("250", 6)) }, blockOffset: 0 },
      { tx: { request: vaultClaim(d, users[4]!) }, blockOffset: Math.floor(depth / 2) },
      {
        tx: { request: tokenTransfer(d, "USDC", users[0]!, users[3]!, parseUnits("33", 6)) },
        blockOffset: depth - 1,
      },
    ];
    // With depth 1 the window has one block: the mint returns from the mempool into the next block instead.
    if (depth > 1) placements.push({ tx: { raw }, blockOffset: depth === 3 ? 0 : 1 });
    const reorg = await reorgChain(url, depth, placements);
    expect(reorg.orphaned).toEqual(original);
    const remined = depth > 1 ? [] : [await sendRawTransaction(url, raw)];

    const eventsFrom = pipeline.events.length;
    const indexed = await catchUpAndVerify();
    const events = eventRefs(pipeline.events.slice(eventsFrom));

    // `removed` for exactly the transactions of the orphaned blocks, naming the orphaned block.
    expect([...events.removed].sort(byHash)).toEqual(refsOf(original).sort(byHash));
    // then the canonical transactions, the moved mint among them with its new block, each once, in order.
    const canonical = refsOf([...reorg.replacement, ...remined]);
    expect(events.added).toEqual(canonical);
    const movedNow = canonical.find((t) => t.hash === moved);
    expect(movedNow?.blockNumber).not.toBe(original.at(-1)!.number);
    expect(events.order.lastIndexOf("removed")).toBeLessThan(events.order.indexOf("transaction"));

    // Balances: for each token some holder's balance changed with the reorg, and the cache equals balanceOf.
    const balancesAfter = await storedBalances(db.database.db);
    for (const symbol of SYMBOLS) {
      const changed = [...balancesAfter.keys()].filter(
        (key) =>
          key.startsWith(`${tokenAddress(symbol)}:`) && balancesAfter.get(key) !== balancesBefore.get(key),
      );
      expect({ symbol, changed: changed.length > 0 }).toEqual({ symbol, changed: true });
      await expectBalancesOnChain(changed, indexed);
    }
    const rows = await db.database.db
      .select({ hash: transactions.hash })
      .from(transactions)
      .where(
        inArray(
          transactions.hash,
          refsOf(original).map((t) => t.hash),
        ),
      );
    expect(rows.map((r) => r.hash)).toEqual([moved]);
  });

  test("behavior: a webhook transaction ahead of the cursor does not linger after its block is reorged away", async () => {
    await pipeline.catchUp();
    const [u1, u2, u3, u4, u5] = users as [Address, Address, Address, Address, Address];
    const block = await mineBlock(url, [
      tokenTransfer(d, "DEMO", u1, u2, parseUnits("5", 18)),
      swapExact(d, u3, ["WETH", "USDC"], parseEther("0.3")),
    ]);
    const outcomes = await pipeline.ingest.ingestHashes(block.transactions, "webhook");
    expect(outcomes.map((o) => o.status)).toEqual(["indexed", "indexed"]);
    const stored = await db.database.db
      .select({ hash: transactions.hash, source: transactions.source, blockHash: transactions.blockHash })
      .from(transactions)
      .where(inArray(transactions.hash, block.transactions));
    expect(stored).toHaveLength(2);
    for (const row of stored) expect(row).toMatchObject({ source: "webhook", blockHash: block.hash });

    // The new block holds nothing relevant: polling finds no log there, yet must drop the stored ones.
    await reorgChain(url, 1, [{ tx: { request: nativeTransfer(u4, u5, parseEther("1")) }, blockOffset: 0 }]);
    const eventsFrom = pipeline.events.length;
    await catchUpAndVerify();
    const events = eventRefs(pipeline.events.slice(eventsFrom));
    expect([...events.removed].sort(byHash)).toEqual(refsOf([block]).sort(byHash));
    expect(events.added).toEqual([]);
    const left = await db.database.db
      .select()
      .from(transactions)
      .where(inArray(transactions.hash, block.transactions));
    expect(left).toEqual([]);
  });

  test("behavior: ingest.rollback({numbers}) drops a webhook block ahead of the cursor and restores balances", async () => {
    const indexed = await pipeline.catchUp();
    const [u1, u2, u3] = users.slice(1) as [Address, Address, Address];
    const block = await mineBlock(url, [
      tokenTransfer(d, "USDC", u1, u2, parseUnits("12", 6)),
      swapExact(d, u3, ["WETH", "USDC"], parseEther("0.2")),
    ]);
    await pipeline.ingest.ingestHashes(block.transactions, "webhook");
    const touched = [
      ...[u1, u2, u3].map((u) => `${tokenAddress("USDC")}:${u}`),
      `${tokenAddress("WETH")}:${u3}`,
      `${tokenAddress("WETH")}:${d.contracts.pairWethUsdc}`,
    ];
    await expectBalancesOnChain(touched, block.number);

    await reorgChain(url, 1, []);
    const eventsFrom = pipeline.events.length;
    const removed = await pipeline.ingest.rollback({ numbers: [block.number] });
    expect(
      removed.map((r) => ({
        hash: r.hash,
        blockNumber: r.blockNumber,
        blockHash: r.blockHash,
        source: r.source,
      })),
    ).toEqual(refsOf([block]).map((t) => ({ ...t, source: "webhook" })));
    const events = eventRefs(pipeline.events.slice(eventsFrom));
    expect(events.removed).toEqual(refsOf([block]));
    expect(events.added).toEqual([]);
    // delta (USDC) and call (WETH) balances are back to what the canonical chain says
    await expectBalancesOnChain(touched, block.number);
    // the polling cursor is not moved by a rollback of single blocks
    expect((await getCursor(db.database.db, CURSOR_NAME))?.blockNumber).toBe(indexed);

    const afterRollback = pipeline.events.length;
    await catchUpAndVerify();
    expect(pipeline.events.length).toBe(afterRollback);
  });

  test("behavior: a webhook commit of an orphaned block between polling's check and its commit does not linger", async () => {
    await pipeline.catchUp();
    const [u1, u2, u3, u4] = users as [Address, Address, Address, Address];
    const block = await mineBlock(url, [tokenTransfer(d, "DEMO", u1, u2, parseUnits("7", 18))]);
    // A webhook fetched the block before the reorg and commits it late: after polling prepared the replacement
    // block of the same number, right before polling commits it.
    const fetched = await fetchTransactionsByHash(pipeline.chain, block.transactions);
    const late = await pipeline.ingest.prepare({
      source: "webhook",
      transactions: fetched.transactions,
      headers: fetched.headers,
      balanceBlock: block.number,
    });
    const reorg = await reorgChain(url, 1, [
      { tx: { request: tokenTransfer(d, "DEMO", u3, u4, parseUnits("9", 18)) }, blockOffset: 0 },
    ]);
    const store = pipeline.ingest.store;
    let delivered = false;
    pipeline.ingest.store = async (prepared, options) => {
      if (!delivered) {
        delivered = true;
        await store(late);
      }
      return store(prepared, options);
    };
    try {
      const eventsFrom = pipeline.events.length;
      await catchUpAndVerify();
      expect(delivered).toBe(true);
      const events = eventRefs(pipeline.events.slice(eventsFrom));
      expect(events.removed).toEqual(refsOf([block]));
      expect(events.added).toEqual(refsOf([block, ...reorg.replacement]));
      const rows = await db.database.db
        .select({ hash: transactions.hash, blockHash: transactions.blockHash })
        .from(transactions)
        .where(eq(transactions.blockNumber, block.number));
      expect(rows).toEqual(refsOf(reorg.replacement).map((t) => ({ hash: t.hash, blockHash: t.blockHash })));
    } finally {
      pipeline.ingest.store = store;
    }
  });

  test("behavior: a polling group fetched before a reorg never rolls back the canonical block a webhook stored", async () => {
    await pipeline.catchUp();
    const [u1, u2, u3, u4] = users as [Address, Address, Address, Address];
    const stale = await mineBlock(url, [tokenTransfer(d, "DEMO", u1, u2, parseUnits("5", 18))]);
    // Polling fetched the block; before it commits, the chain replaces it and a webhook stores the new one
    // (ahead of the cursor): the group's copy of the block is stale, the stored one is canonical.
    const store = pipeline.ingest.store;
    let replacement: ChainBlock | undefined;
    pipeline.ingest.store = async (prepared, options) => {
      if (!replacement && prepared.args.headers.some((h) => h.number === stale.number)) {
        const reorg = await reorgChain(url, 1, [
          { tx: { request: tokenTransfer(d, "DEMO", u3, u4, parseUnits("6", 18)) }, blockOffset: 0 },
        ]);
        replacement = reorg.replacement[0]!;
        await pipeline.ingest.ingestHashes(replacement.transactions, "webhook");
      }
      return store(prepared, options);
    };
    try {
      const eventsFrom = pipeline.events.length;
      await catchUpAndVerify();
      expect(replacement?.number).toBe(stale.number);
      const events = eventRefs(pipeline.events.slice(eventsFrom));
      // The webhook's canonical transaction was stored once and never announced as removed; the stale block
      // was never stored, so nothing else was removed either.
      expect(events.removed).toEqual([]);
      expect(events.added).toEqual(refsOf([replacement!]));
    } finally {
      pipeline.ingest.store = store;
    }
  });

  test("behavior: stale polling blocks below a canonical block a webhook stored are rolled back too", async () => {
    await pipeline.catchUp();
    const [u1, u2, u3, u4, u5] = users as [Address, Address, Address, Address, Address];
    // Polling stores the first and the last of three blocks; the middle one holds nothing it scans.
    const indexedWindow = [
      await mineBlock(url, [tokenTransfer(d, "DEMO", u1, u2, parseUnits("11", 18))]),
      await mineBlock(url, [nativeTransfer(u4, u5, parseEther("0.1"))]),
      await mineBlock(url, [swapExact(d, u3, ["WETH", "USDC"], parseEther("0.25"))]),
    ];
    await pipeline.catchUp();
    // The chain replaces all three. Before polling notices, a webhook stores the new middle block: canonical,
    // at a number where polling stored no header, above the stale first block.
    const reorg = await reorgChain(url, 3, [
      { tx: { request: tokenTransfer(d, "DEMO", u2, u4, parseUnits("13", 18)) }, blockOffset: 1 },
    ]);
    const middle = reorg.replacement[1]!;
    const outcomes = await pipeline.ingest.ingestHashes(middle.transactions, "webhook");
    expect(outcomes.map((o) => o.status)).toEqual(["indexed"]);

    const eventsFrom = pipeline.events.length;
    // The walk back to the common ancestor must not stop at the webhook's block: the stale first block and its
    // transaction below it would stay stored for good.
    await catchUpAndVerify();
    const events = eventRefs(pipeline.events.slice(eventsFrom));
    const stale = refsOf([indexedWindow[0]!, indexedWindow[2]!]);
    expect(events.removed.filter((r) => stale.some((s) => s.hash === r.hash)).sort(byHash)).toEqual(
      stale.sort(byHash),
    );
    const rows = await db.database.db
      .select({ hash: transactions.hash, blockHash: transactions.blockHash })
      .from(transactions)
      .where(
        inArray(
          transactions.blockNumber,
          indexedWindow.map((b) => b.number),
        ),
      );
    expect(rows).toEqual(refsOf([middle]).map((t) => ({ hash: t.hash, blockHash: t.blockHash })));
  });

  test("behavior: a webhook transaction reorged into a later block is stored again there", async () => {
    // Polling finds it again here (a DEMO mint); one polling cannot see is found by the track watcher
    // (test/e2e/trackTx.test.ts), the one owner of looking up removed webhook and track-tx transactions.
    await pipeline.catchUp();
    const block = await mineBlock(url, [ownerMint(d, "DEMO", users[3]!, parseUnits("4242", 18))]);
    const hash = block.transactions[0]!;
    await pipeline.ingest.ingestHashes([hash], "webhook");
    const raw = await rawTransaction(url, hash);
    await reorgChain(url, 1, []);
    const later = await sendRawTransaction(url, raw);
    expect(later.number).toBe(block.number + 1);

    const eventsFrom = pipeline.events.length;
    await catchUpAndVerify();
    const events = eventRefs(pipeline.events.slice(eventsFrom));
    expect(events.removed).toEqual(refsOf([block]));
    expect(events.added).toEqual(refsOf([later]));
    const rows = await db.database.db.select().from(transactions).where(eq(transactions.hash, hash));
    expect(rows.map((r) => ({ blockNumber: r.blockNumber, blockHash: r.blockHash }))).toEqual([
      { blockNumber: later.number, blockHash: later.hash },
    ]);
  });

  test("behavior: a reorg between the range headers and eth_getLogs", async () => {
    // A second indexer reads the chain through a proxy that reorganizes it right before one eth_getLogs.
    const proxy = await startHookProxy({ upstream: url });
    const config = resolveConfig(
      { ...chain.configFile, rpc: { ...chain.configFile.rpc, urls: [proxy.url] } },
      null,
    );
    const db2 = await createTestDatabase();
    const p2 = await createTestPipeline({ config, database: db2.database });
    try {
      await p2.catchUp();
      const [u1, u2, u3, u4] = users as [Address, Address, Address, Address];
      // two indexed blocks, then two the indexer has not seen yet
      const indexedWindow = [
        await mineBlock(url, [tokenTransfer(d, "DEMO", u1, u2, parseUnits("9", 18))]),
        await mineBlock(url, [swapExact(d, u3, ["WETH", "USDC"], parseEther("0.4"))]),
      ];
      await p2.catchUp();
      await mineBlock(url, [tokenTransfer(d, "DEMO", u4, u1, parseUnits("3", 18))]);
      await mineBlock(url, [vaultClaim(d, u2)]);
      // The new chain replaces all four; its only relevant transaction is in the third block, so the range
      // end (the fourth) has no log that could reveal the change.
      let reorged = false;
      proxy.beforeNext("eth_getLogs", async () => {
        await reorgChain(url, 4, [
          { tx: { request: tokenTransfer(d, "USDC", u2, u3, parseUnits("21", 6)) }, blockOffset: 2 },
        ]);
        reorged = true;
      });
      const eventsFrom = p2.events.length;
      // the same catch-up notices the change, rolls back to the common ancestor and indexes the new chain
      const indexed = await catchUpAndVerify(p2, db2.database.db);
      expect(reorged).toBe(true);
      const events = eventRefs(p2.events.slice(eventsFrom));
      expect([...events.removed].sort(byHash)).toEqual(refsOf(indexedWindow).sort(byHash));
      const now = await readBlocks(url, indexedWindow[0]!.number, indexed);
      expect(events.added).toEqual(refsOf(now));
      // and nothing is left for the next cycle to repair
      const settled = p2.events.length;
      await p2.catchUp();
      expect(p2.events.length).toBe(settled);
    } finally {
      await p2.close();
      await db2.cleanup();
      await proxy.close();
    }
  });
});
