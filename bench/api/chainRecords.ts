import { createHash } from "node:crypto";
import { getAddress, type Hex, toEventSelector } from "viem";
import type { Address } from "../../src/config/schema.ts";
import type { IndexedLog, IndexedTransfer } from "../../src/decode/decodeTransaction.ts";
import { ZERO_ADDRESS } from "../../src/store/encode.ts";

/**
 * Chain-shaped records for the API benchmark's synthetic transactions: the logs and transfers a real
 * receipt of the same call would carry, decoded as `src/decode/` would decode them (event args as strings,
 * addresses EIP-55).
 */

export const ZERO = ZERO_ADDRESS as Address;

const TRANSFER = toEventSelector("Transfer(address,address,uint256)");
const SYNC = toEventSelector("Sync(uint112,uint112)");
const SWAP = toEventSelector("Swap(address,uint256,uint256,uint256,uint256,address)");
const DEPOSITED = toEventSelector("Deposited(address,uint256)");

/** A deterministic 32-byte hash for a name (transaction and block hashes). */
export function fakeHash(name: string): Hex {
  return `0x${createHash("sha256").update(`protoscan-bench:${name}`).digest("hex")}`;
}

/** The hash of the dataset's block `n` (the RPC stand-in answers `eth_getBlockByNumber` with it too). */
export function benchBlockHash(n: number): Hex {
  return fakeHash(`block ${n}`);
}

const checksums = new Map<string, string>();

/** EIP-55 form, memoized: the generator checksums the same 50,000 addresses hundreds of thousands of times. */
export function cs(address: string): string {
  let out = checksums.get(address);
  if (out === undefined) {
    out = getAddress(address);
    checksums.set(address, out);
  }
  return out;
}

const word = (value: bigint): string => value.toString(16).padStart(64, "0");
const topicOf = (address: string): Hex => `0x${address.slice(2).padStart(64, "0")}`;

/** An ERC-20 `Transfer` log and the tracked-token transfer it is. */
export function transferRecords(
  logIndex: number,
  token: Address,
  from: Address,
  to: Address,
  amount: bigint,
): { log: IndexedLog; transfer: IndexedTransfer } {
  return {
    log: {
      logIndex,
      address: token,
      topics: [TRANSFER, topicOf(from), topicOf(to)],
      data: `0x${word(amount)}`,
      eventName: "Transfer",
      eventArgs: { from: cs(from), to: cs(to), value: amount.toString() },
    },
    transfer: { logIndex, token, from, to, amount },
  };
}

/** A Uniswap V2 pair's `Sync` log. */
export function syncLog(logIndex: number, pair: Address, reserve0: bigint, reserve1: bigint): IndexedLog {
  return {
    logIndex,
    address: pair,
    topics: [SYNC],
    data: `0x${word(reserve0)}${word(reserve1)}`,
    eventName: "Sync",
    eventArgs: { reserve0: reserve0.toString(), reserve1: reserve1.toString() },
  };
}

/** A Uniswap V2 pair's `Swap` log (`amounts`: amount0In, amount1In, amount0Out, amount1Out). */
export function swapLog(
  logIndex: number,
  pair: Address,
  sender: Address,
  to: Address,
  amounts: readonly [bigint, bigint, bigint, bigint],
): IndexedLog {
  const [amount0In, amount1In, amount0Out, amount1Out] = amounts;
  return {
    logIndex,
    address: pair,
    topics: [SWAP, topicOf(sender), topicOf(to)],
    data: `0x${amounts.map(word).join("")}`,
    eventName: "Swap",
    eventArgs: {
      sender: cs(sender),
      amount0In: amount0In.toString(),
      amount1In: amount1In.toString(),
      amount0Out: amount0Out.toString(),
      amount1Out: amount1Out.toString(),
      to: cs(to),
    },
  };
}

/** The StakingVault's `Deposited` log. */
export function depositedLog(logIndex: number, vault: Address, user: Address, amount: bigint): IndexedLog {
  return {
    logIndex,
    address: vault,
    topics: [DEPOSITED, topicOf(user)],
    data: `0x${word(amount)}`,
    eventName: "Deposited",
    eventArgs: { user: cs(user), amount: amount.toString() },
  };
}
