import { asc } from "drizzle-orm";
import { createPublicClient, erc20Abi, type Hash, http, type PublicClient } from "viem";
import type { Config } from "../../src/config/schema.ts";
import { groupBy } from "../../src/internal/groupBy.ts";
import type { Db } from "../../src/store/createDatabase.ts";
import { logs, tokenBalances, tokenTransfers, transactions } from "../../src/store/schema.ts";

const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
const ZERO = "0x0000000000000000000000000000000000000000";

/**
 * Compare protoscan's store with the chain, independently of protoscan's own code: read every block up to
 * `toBlock` with plain viem, decide which transactions polling must have stored (a log emitted by an
 * exclusive contract or token), and check every stored transaction, log, transfer and cached balance.
 * Returns a list of human-readable mismatches (empty when the store is exact).
 */
export async function verifyStoreAgainstChain(options: {
  rpcUrl: string;
  db: Db;
  config: Config;
  fromBlock?: number;
  toBlock: number;
  /** hashes stored by webhooks/track-tx that polling cannot see (they are allowed in the store) */
  extraHashes?: ReadonlySet<string>;
}): Promise<string[]> {
  const client = createPublicClient({
    transport: http(options.rpcUrl, { batch: { batchSize: 100 } }),
  }) as PublicClient;
  const scanned = new Set<string>();
  for (const p of options.config.protocols)
    for (const c of p.contracts) if (c.exclusive) scanned.add(c.address);
  for (const t of options.config.tokens) if (t.exclusive) scanned.add(t.address);
  const tracked = new Set(options.config.tokens.map((t) => t.address as string));

  type Expected = {
    blockNumber: number;
    blockHash: string;
    transactionIndex: number;
    timestamp: number;
    from: string;
    to: string | null;
    value: bigint;
    gasUsed: bigint;
    gasPrice: bigint;
    status: boolean;
    logs: { logIndex: number; address: string; topics: string[]; data: string }[];
  };
  const expected = new Map<string, Expected>();
  const from = options.fromBlock ?? 0;
  const numbers = Array.from({ length: options.toBlock - from + 1 }, (_, i) => from + i);
  for (let i = 0; i < numbers.length; i += 50) {
    const part = numbers.slice(i, i + 50);
    const blocks = await Promise.all(
      part.map((n) => client.getBlock({ blockNumber: BigInt(n), includeTransactions: true })),
    );
    const receipts = await Promise.all(part.map((n) => client.getBlockReceipts({ blockNumber: BigInt(n) })));
    blocks.forEach((block, j) => {
      for (const receipt of receipts[j]!) {
        const all = receipt.logs.map((l) => ({
          logIndex: l.logIndex,
          address: l.address.toLowerCase(),
          topics: l.topics.map((t) => t.toLowerCase()),
          data: l.data.toLowerCase(),
        }));
        const seen = all.some((l) => scanned.has(l.address));
        const extra = options.extraHashes?.has(receipt.transactionHash.toLowerCase());
        if (!seen && !extra) continue;
        const tx = block.transactions.find((t) => t.hash === receipt.transactionHash)!;
        expected.set(receipt.transactionHash.toLowerCase(), {
          blockNumber: Number(block.number),
          blockHash: block.hash!.toLowerCase(),
          transactionIndex: receipt.transactionIndex,
          timestamp: Number(block.timestamp) * 1000,
          from: receipt.from.toLowerCase(),
          to: receipt.to?.toLowerCase() ?? null,
          value: tx.value,
          gasUsed: receipt.gasUsed,
          gasPrice: receipt.effectiveGasPrice,
          status: receipt.status === "success",
          logs: all,
        });
      }
    });
  }

  const problems: string[] = [];
  const storedTxs = await options.db.select().from(transactions).orderBy(asc(transactions.blockNumber));
  const storedLogs = await options.db.select().from(logs);
  const storedTransfers = await options.db.select().from(tokenTransfers);
  const logsOf = groupBy(storedLogs, (l) => l.txHash);
  const transfersOf = groupBy(storedTransfers, (t) => t.txHash);

  for (const row of storedTxs) {
    if (row.blockNumber < from || row.blockNumber > options.toBlock) continue;
    const want = expected.get(row.hash);
    if (!want) {
      problems.push(`extra transaction stored: ${row.hash} (block ${row.blockNumber})`);
      continue;
    }
    const got = {
      blockNumber: row.blockNumber,
      blockHash: row.blockHash,
      transactionIndex: row.transactionIndex,
      timestamp: row.blockTimestamp.getTime(),
      from: row.fromAddress,
      to: row.toAddress,
      value: row.valueWei,
      gasUsed: row.gasUsed,
      gasPrice: row.gasPrice,
      status: row.status,
    };
    for (const [key, value] of Object.entries(got)) {
      const w = want[key as keyof Expected];
      if (w !== value) problems.push(`${row.hash}.${key}: stored ${String(value)}, chain ${String(w)}`);
    }
    const gotLogs = (logsOf.get(row.hash) ?? [])
      .sort((a, b) => a.logIndex - b.logIndex)
      .map((l) => ({ logIndex: l.logIndex, address: l.address, topics: l.topics, data: l.data }));
    if (JSON.stringify(gotLogs) !== JSON.stringify(want.logs))
      problems.push(`${row.hash}: logs differ from the receipt`);
    const wantTransfers = want.logs
      .filter((l) => tracked.has(l.address) && l.topics.length === 3 && l.topics[0] === TRANSFER_TOPIC)
      .map(
        (l) =>
          `${l.logIndex}:${l.address}:0x${l.topics[1]!.slice(26)}:0x${l.topics[2]!.slice(26)}:${BigInt(l.data)}`,
      );
    const gotTransfers = (transfersOf.get(row.hash) ?? [])
      .sort((a, b) => a.logIndex - b.logIndex)
      .map((t) => `${t.logIndex}:${t.tokenAddress}:${t.fromAddress}:${t.toAddress}:${t.amount}`);
    if (JSON.stringify(gotTransfers) !== JSON.stringify(wantTransfers)) {
      problems.push(
        `${row.hash}: transfers differ (stored ${gotTransfers.length}, chain ${wantTransfers.length})`,
      );
    }
  }
  const storedSet = new Set(storedTxs.map((t) => t.hash));
  for (const hash of expected.keys()) if (!storedSet.has(hash)) problems.push(`missing transaction: ${hash}`);

  // Every cached balance equals balanceOf at the indexed block, and every holder with a balance is cached.
  const balances = await options.db.select().from(tokenBalances);
  const holders = new Set<string>();
  for (const t of storedTransfers) {
    for (const h of [t.fromAddress, t.toAddress]) if (h !== ZERO) holders.add(`${t.tokenAddress}:${h}`);
  }
  for (const b of balances) holders.add(`${b.tokenAddress}:${b.holder}`);
  const cached = new Map(balances.map((b) => [`${b.tokenAddress}:${b.holder}`, b.balance]));
  const pairs = [...holders];
  for (let i = 0; i < pairs.length; i += 200) {
    const part = pairs.slice(i, i + 200);
    const onChain = await Promise.all(
      part.map((key) => {
        const [token, holder] = key.split(":") as [Hash, Hash];
        return client.readContract({
          address: token,
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [holder],
          blockNumber: BigInt(options.toBlock),
        });
      }),
    );
    part.forEach((key, j) => {
      const got = cached.get(key) ?? 0n;
      if (got !== onChain[j]) problems.push(`balance ${key}: cached ${got}, balanceOf ${onChain[j]}`);
    });
  }
  return problems;
}
