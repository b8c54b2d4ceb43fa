import type { Hex } from "viem";
import type { Address } from "../config/schema.ts";

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

export type DecodedTransfer = { from: Address; to: Address; amount: bigint };

/**
 * Read an ERC-20 `Transfer(address indexed from, address indexed to, uint256 value)` log: exactly three
 * topics and 32 bytes of data. ERC-721 transfers (four topics, empty data) and malformed logs give null.
 */
export function decodeTransfer(topics: readonly Hex[], data: Hex): DecodedTransfer | null {
  if (topics.length !== 3 || topics[0]?.toLowerCase() !== TRANSFER_TOPIC) return null;
  if (data.length !== 66) return null;
  const from = topicToAddress(topics[1]!);
  const to = topicToAddress(topics[2]!);
  if (!from || !to) return null;
  return { from, to, amount: BigInt(data) };
}

function topicToAddress(topic: Hex): Address | null {
  if (topic.length !== 66 || !/^0x0{24}/i.test(topic)) return null;
  return `0x${topic.slice(26).toLowerCase()}`;
}
