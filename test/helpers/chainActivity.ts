import { createPublicClient, getAddress, type Hex, http, keccak256, toHex } from "viem";
import type { Config } from "../../src/config/schema.ts";

/** A transaction the polling indexer must store, as read from the chain by the test itself. */
export type ExpectedTransaction = {
  hash: string;
  blockNumber: number;
  transactionIndex: number;
  /** block timestamp in ms */
  timestamp: number;
  from: string;
  to: string | null;
  status: boolean;
  protocol: string;
  /** sender, recipient, created contract and tracked-token transfer parties, lowercase, zero address excluded */
  parties: Set<string>;
  transfers: { token: string; from: string; to: string; amount: bigint }[];
};

const TRANSFER = keccak256(toHex("Transfer(address,address,uint256)"));
const ZERO = "0x0000000000000000000000000000000000000000";

type RpcLog = { address: string; topics: Hex[]; data: Hex; logIndex: Hex };
type RpcReceipt = {
  transactionHash: string;
  transactionIndex: Hex;
  from: string;
  to: string | null;
  contractAddress: string | null;
  status: Hex;
  logs: RpcLog[];
};

/**
 * What SPEC §3 says the polling indexer stores from blocks `fromBlock..toBlock`, computed from the chain
 * (blocks and `eth_getBlockReceipts`) without protoscan's code: every transaction with a log emitted by an
 * exclusive contract or an exclusive tracked token; attributed to the protocol of `to` (contract or tracked
 * token), else of the first log emitted by a configured contract or tracked token. Oldest first.
 */
export async function readExpectedTransactions(
  rpcUrl: string,
  config: Config,
  fromBlock: number,
  toBlock: number,
): Promise<ExpectedTransaction[]> {
  const client = createPublicClient({ transport: http(rpcUrl) });
  const owner = new Map<string, string>();
  for (const p of config.protocols) for (const c of p.contracts) owner.set(c.address.toLowerCase(), p.id);
  for (const t of config.tokens) owner.set(t.address.toLowerCase(), t.protocol);
  const tokens = new Set(config.tokens.map((t) => t.address.toLowerCase()));
  const scanned = new Set([
    ...config.protocols.flatMap((p) =>
      p.contracts.filter((c) => c.exclusive).map((c) => c.address.toLowerCase()),
    ),
    ...config.tokens.filter((t) => t.exclusive).map((t) => t.address.toLowerCase()),
  ]);

  const expected: ExpectedTransaction[] = [];
  for (let number = fromBlock; number <= toBlock; number++) {
    const [block, receipts] = await Promise.all([
      client.getBlock({ blockNumber: BigInt(number) }),
      client.request({ method: "eth_getBlockReceipts" as "eth_chainId", params: [toHex(number)] as never }),
    ]);
    for (const receipt of receipts as unknown as RpcReceipt[]) {
      const logs = [...receipt.logs].sort((a, b) => Number(a.logIndex) - Number(b.logIndex));
      if (!logs.some((l) => scanned.has(l.address.toLowerCase()))) continue;
      const to = receipt.to?.toLowerCase() ?? null;
      const protocol =
        (to && owner.get(to)) ??
        logs.map((l) => owner.get(l.address.toLowerCase())).find((p) => p !== undefined);
      if (protocol === undefined) throw new Error(`test: no protocol for ${receipt.transactionHash}`);
      const transfers = logs
        .filter(
          (l) => tokens.has(l.address.toLowerCase()) && l.topics[0] === TRANSFER && l.topics.length === 3,
        )
        .map((l) => ({
          token: l.address.toLowerCase(),
          from: `0x${l.topics[1]!.slice(26)}`.toLowerCase(),
          to: `0x${l.topics[2]!.slice(26)}`.toLowerCase(),
          amount: BigInt(l.data),
        }));
      const parties = new Set<string>([receipt.from.toLowerCase()]);
      if (to) parties.add(to);
      if (receipt.contractAddress) parties.add(receipt.contractAddress.toLowerCase());
      for (const t of transfers) parties.add(t.from).add(t.to);
      parties.delete(ZERO);
      expected.push({
        hash: receipt.transactionHash.toLowerCase(),
        blockNumber: number,
        transactionIndex: Number(receipt.transactionIndex),
        timestamp: Number(block.timestamp) * 1000,
        from: receipt.from.toLowerCase(),
        to,
        status: receipt.status === "0x1",
        protocol,
        parties,
        transfers,
      });
    }
  }
  return expected.sort((a, b) => a.blockNumber - b.blockNumber || a.transactionIndex - b.transactionIndex);
}

/** Newest first, as the API lists transactions. */
export function newestFirst<T extends { blockNumber: number; transactionIndex: number }>(
  list: readonly T[],
): T[] {
  return [...list].sort((a, b) => b.blockNumber - a.blockNumber || b.transactionIndex - a.transactionIndex);
}

/** EIP-55 of a lowercase address, or null. */
export function eip55(address: string | null): string | null {
  return address === null ? null : getAddress(address);
}

type Inject = (url: string) => Promise<{ statusCode: number; json(): unknown }>;
type TxPage = { transactions: { txHash: string }[]; nextCursor: string | null };

/** Every page of a transaction list, following `nextCursor` (`limit` per page); the bodies, in order. */
export async function cursorPages<P extends TxPage>(
  inject: Inject,
  url: string,
  limit: number,
): Promise<P[]> {
  const pages: P[] = [];
  let cursor: string | null = null;
  const sep = url.includes("?") ? "&" : "?";
  for (let i = 0; i < 1000; i++) {
    const response = await inject(`${url}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    if (response.statusCode !== 200) throw new Error(`test: ${url} answered ${response.statusCode}`);
    const page = response.json() as P;
    pages.push(page);
    cursor = page.nextCursor;
    if (cursor === null) return pages;
  }
  throw new Error("test: too many pages");
}

/** Every page of a transaction list by `offset` (`limit` per page) until an empty page; the bodies, in order. */
export async function offsetPages<P extends TxPage>(
  inject: Inject,
  url: string,
  limit: number,
): Promise<P[]> {
  const pages: P[] = [];
  const sep = url.includes("?") ? "&" : "?";
  for (let offset = 0; offset <= 10_000; offset += limit) {
    const response = await inject(`${url}${sep}limit=${limit}&offset=${offset}`);
    if (response.statusCode !== 200) throw new Error(`test: ${url} answered ${response.statusCode}`);
    const page = response.json() as P;
    pages.push(page);
    if (page.transactions.length === 0) return pages;
  }
  throw new Error("test: too many pages");
}
