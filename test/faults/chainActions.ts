import {
  createPublicClient,
  encodeFunctionData,
  type Hash,
  http,
  type PublicClient,
  parseEther,
  parseUnits,
  toHex,
} from "viem";
import type { Address } from "../../src/config/schema.ts";
import { createJsonRpc, type DemoTx } from "../../src/demo/demoClient.ts";
import type { DemoDeployment } from "../../src/demo/deploy.ts";
import {
  nativeTransfer,
  ownerMint,
  swapExact,
  tokenTransfer,
  vaultClaim,
  vaultDeposit,
} from "../helpers/demoTxs.ts";
import type { Random } from "../helpers/faultsRandom.ts";
import { type ReorgPlacement, rawTransaction, readBlocks, reorgChain } from "../helpers/reorg.ts";

/**
 * What a transaction is to protoscan:
 * - `scanned`: it has a log of an exclusive contract or token: polling must store it;
 * - `side`: it touches a shared contract or a tracked token that is not scanned (a Disperse call, a WETH
 *   transfer between users): only webhooks or track-tx store it;
 * - `irrelevant`: a plain ether transfer: track-tx answers 422.
 */
export type TxClass = "scanned" | "side" | "irrelevant";

export type PlannedTx = { tx: DemoTx; class: TxClass };

const units = (n: number, decimals: number) => parseUnits(String(n), decimals);

/** One random demo transaction that succeeds in any state the simulation reaches. */
export function randomTx(random: Random, d: DemoDeployment): PlannedTx {
  const users = d.users;
  const from = random.pick(users);
  const to = random.pick(users.filter((u) => u !== from));
  switch (random.weighted({ demo: 3, usdc: 2, swap: 4, deposit: 1, claim: 1, mint: 1, weth: 1, native: 1 })) {
    case "demo":
      return { tx: tokenTransfer(d, "DEMO", from, to, units(random.int(1, 100), 18)), class: "scanned" };
    case "usdc":
      return { tx: tokenTransfer(d, "USDC", from, to, units(random.int(1, 100), 6)), class: "scanned" };
    case "swap": {
      const path = random.pick([
        ["DEMO", "USDC"],
        ["USDC", "DEMO"],
        ["WETH", "USDC"],
        ["USDC", "WETH"],
      ] as const);
      const amount = {
        DEMO: units(random.int(1, 50), 18),
        USDC: units(random.int(1, 50), 6),
        WETH: parseEther("0.01"),
      };
      return { tx: swapExact(d, from, path, amount[path[0]]), class: "scanned" };
    }
    case "deposit":
      return { tx: vaultDeposit(d, from, units(random.int(1, 10), 18)), class: "scanned" };
    case "claim":
      return { tx: vaultClaim(d, from), class: "scanned" };
    case "mint":
      return {
        tx: ownerMint(d, random.pick(["DEMO", "USDC"] as const), to, units(random.int(1, 9), 6)),
        class: "scanned",
      };
    case "weth":
      return { tx: tokenTransfer(d, "WETH", from, to, parseEther("0.001")), class: "side" };
    default:
      return { tx: nativeTransfer(from, to, parseEther("0.01")), class: "irrelevant" };
  }
}

/** A Disperse call (a shared contract, so polling never sees it): ether, or WETH, to two other users. */
export function disperseTx(random: Random, d: DemoDeployment): PlannedTx {
  const from = random.pick(d.users);
  const recipients = random.shuffle(d.users.filter((u) => u !== from)).slice(0, 2) as Address[];
  if (random.chance(0.5)) {
    const amounts = [parseEther("0.01"), parseEther("0.02")];
    return {
      tx: {
        from,
        to: d.contracts.disperse,
        value: parseEther("0.03"),
        gas: 200_000n,
        data: encodeFunctionData({
          abi: d.abis.disperse,
          functionName: "disperseEther",
          args: [recipients, amounts],
        }),
      },
      class: "side",
    };
  }
  const amounts = [parseEther("0.001"), parseEther("0.002")];
  return {
    tx: {
      from,
      to: d.contracts.disperse,
      gas: 200_000n,
      data: encodeFunctionData({
        abi: d.abis.disperse,
        functionName: "disperseToken",
        args: [d.tokens.WETH.address, recipients, amounts],
      }),
    },
    class: "side",
  };
}

export type ReorgOutcome = {
  depth: number;
  /** hashes of the orphaned blocks not mined again */
  dropped: Hash[];
  /** hashes mined again in the replacement blocks (same transaction, maybe another block) */
  replayed: Hash[];
  /** transactions new in the replacement blocks, with their class */
  added: { hash: Hash; class: TxClass }[];
};

/**
 * Reorganize the last `depth` blocks (anvil_reorg). Each orphaned `scanned` transaction is mined again in the
 * same offset of the replacement with probability 0.6 (signed bytes kept: same hash); the others are dropped,
 * and so is every later transaction of a sender once one of theirs is dropped (nonces). Side transactions
 * are always dropped: nothing would ingest them again. A few new scanned transactions from senders without a
 * replayed transaction fill the new blocks.
 */
export async function randomReorg(
  random: Random,
  rpcUrl: string,
  d: DemoDeployment,
  depth: number,
  classOf: (hash: string) => TxClass | undefined,
): Promise<ReorgOutcome> {
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) }) as PublicClient;
  const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
  const orphaned = await readBlocks(rpcUrl, head - depth + 1, head);
  const placements: ReorgPlacement[] = [];
  const stopped = new Set<string>();
  const replaying = new Set<string>();
  const dropped: Hash[] = [];
  const replayed: Hash[] = [];
  for (const [offset, block] of orphaned.entries()) {
    for (const hash of block.transactions) {
      const tx = await client.getTransaction({ hash });
      const sender = tx.from.toLowerCase();
      const keep = !stopped.has(sender) && classOf(hash) === "scanned" && random.chance(0.6);
      if (!keep) {
        stopped.add(sender);
        dropped.push(hash);
        continue;
      }
      replaying.add(sender);
      replayed.push(hash);
      placements.push({ tx: { raw: await rawTransaction(rpcUrl, hash) }, blockOffset: offset });
    }
  }
  const free = [...d.users, d.deployer].filter((a) => !replaying.has(a.toLowerCase()));
  const fresh = random.int(0, 3);
  for (let i = 0; i < fresh && free.length > 0; i++) {
    let planned = randomTx(random, d);
    for (
      let tries = 0;
      tries < 5 && (planned.class !== "scanned" || !free.includes(planned.tx.from));
      tries++
    ) {
      planned = randomTx(random, d);
    }
    if (planned.class !== "scanned" || !free.includes(planned.tx.from)) continue;
    placements.push({ tx: { request: planned.tx }, blockOffset: random.int(0, depth - 1) });
  }
  // anvil signs requests with nonces counted from the common ancestor, in placement order per sender.
  placements.sort((a, b) => a.blockOffset - b.blockOffset);
  const result = await reorgChain(rpcUrl, depth, placements);
  const known = new Set<string>(replayed);
  const added = result.replacement
    .flatMap((b) => b.transactions)
    .filter((h) => !known.has(h))
    .map((hash) => ({ hash, class: "scanned" as const }));
  return { depth, dropped, replayed, added };
}

/**
 * Mine one block holding `txs`, sent one after the other with automine paused (anvil can hang on concurrent
 * sends), 12 seconds after the previous block. Returns the hashes in the order given and the block number;
 * throws unless every transaction succeeded.
 */
export async function mineTxs(
  rpcUrl: string,
  txs: readonly DemoTx[],
): Promise<{ hashes: Hash[]; block: number }> {
  const rpc = createJsonRpc(rpcUrl);
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) }) as PublicClient;
  const nonces = new Map<string, number>();
  const hashes: Hash[] = [];
  await rpc("evm_setAutomine", [false]);
  try {
    for (const tx of txs) {
      const nonce =
        nonces.get(tx.from) ?? (await client.getTransactionCount({ address: tx.from, blockTag: "pending" }));
      nonces.set(tx.from, nonce + 1);
      const hash = await rpc("eth_sendTransaction", [
        {
          from: tx.from,
          ...(tx.to ? { to: tx.to } : {}),
          ...(tx.data ? { data: tx.data } : {}),
          ...(tx.value !== undefined ? { value: toHex(tx.value) } : {}),
          ...(tx.gas !== undefined ? { gas: toHex(tx.gas) } : {}),
          nonce: toHex(nonce),
        },
      ]);
      if (typeof hash !== "string") throw new Error("eth_sendTransaction returned no hash");
      hashes.push(hash.toLowerCase() as Hash);
    }
    await rpc("evm_increaseTime", [12]);
    await rpc("anvil_mine", [1]);
  } finally {
    await rpc("evm_setAutomine", [true]);
  }
  let block = -1;
  for (const hash of hashes) {
    const receipt = await client.getTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`mineTxs: ${hash} reverted`);
    block = Number(receipt.blockNumber);
  }
  if (block === -1) block = Number(await client.getBlockNumber({ cacheTime: 0 }));
  return { hashes, block };
}
