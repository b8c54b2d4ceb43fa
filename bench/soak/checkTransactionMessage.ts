import Value from "typebox/value";
import { getAddress, isAddress } from "viem";
import { type TransactionJson, TransactionSchema } from "../../src/api/schemas/transaction.ts";

const HASH = /^0x[0-9a-f]{64}$/;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * What is wrong with a `{"type":"transaction","topic":T,"data":Transaction}` WebSocket message (SPEC §5), or
 * null when nothing is: `data` must match the Transaction schema of `GET /api/tx/:hash`, with a lowercase
 * hash, EIP-55 addresses and an ISO time with milliseconds; `topic` must be one the client subscribed to, and
 * the transaction must belong to it (its protocol; the address as sender, recipient or transfer party; a
 * transfer of the token).
 */
export function checkTransactionMessage(message: unknown, subscribed: ReadonlySet<string>): string | null {
  if (typeof message !== "object" || message === null) return "not a JSON object";
  const { type, topic, data } = message as { type?: unknown; topic?: unknown; data?: unknown };
  if (type !== "transaction") return `type ${JSON.stringify(type)}, not "transaction"`;
  if (typeof topic !== "string" || !subscribed.has(topic))
    return `topic ${JSON.stringify(topic)} not subscribed`;
  if (!Value.Check(TransactionSchema, data)) {
    const first = Value.Errors(TransactionSchema, data)[0];
    return `data does not match the Transaction schema${first ? `: ${first.instancePath} ${first.message}` : ""}`;
  }
  const tx = data as TransactionJson;
  if (!HASH.test(tx.txHash)) return `txHash ${tx.txHash} is not a lowercase 32-byte hash`;
  if (!ISO_MS.test(tx.blockTimestamp))
    return `blockTimestamp ${tx.blockTimestamp} is not ISO with milliseconds`;
  const addresses = [
    tx.fromAddress,
    ...(tx.toAddress ? [tx.toAddress] : []),
    ...tx.tokenTransfers.flatMap((t) => [t.tokenAddress, t.fromAddress, t.toAddress]),
  ];
  const bad = addresses.find((a) => !isAddress(a, { strict: false }) || getAddress(a) !== a);
  if (bad !== undefined) return `address ${bad} is not EIP-55`;
  const [kind, value = ""] = topic.split(":");
  const lower = value.toLowerCase();
  const party = (a: string | null) => a?.toLowerCase() === lower;
  switch (kind) {
    case "transactions":
      return null;
    case "protocol":
      return tx.protocol === value ? null : `protocol ${tx.protocol} on topic ${topic}`;
    case "address":
      return party(tx.fromAddress) ||
        party(tx.toAddress) ||
        tx.tokenTransfers.some((t) => party(t.fromAddress) || party(t.toAddress))
        ? null
        : `address of topic ${topic} is not a party of ${tx.txHash}`;
    case "token":
      return tx.tokenTransfers.some((t) => party(t.tokenAddress))
        ? null
        : `no transfer of the token of topic ${topic} in ${tx.txHash}`;
    default:
      return `unknown topic kind ${kind}`;
  }
}
