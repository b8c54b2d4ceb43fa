import { randomBytes } from "node:crypto";
import { hmacHex } from "../hmacMatches.ts";

/**
 * Provider payloads shaped as Alchemy and QuickNode document them, and signed the way they sign, for tests.
 * @see https://www.alchemy.com/docs/reference/address-activity-webhook (ADDRESS_ACTIVITY example response)
 * @see https://www.alchemy.com/docs/reference/custom-webhook (GRAPHQL example response)
 * @see https://www.quicknode.com/docs/streams/data-sources (`{data, metadata}` deliveries)
 */

type Hex = `0x${string}`;

/** One transfer of an ADDRESS_ACTIVITY event (`external` ETH, `internal` ETH or `token`). */
export type AlchemyActivity = {
  hash: Hex;
  blockNum: number;
  fromAddress: Hex;
  toAddress: Hex;
  category: "external" | "internal" | "token";
  /** ETH value or token amount in whole units, as Alchemy sends it (a float) */
  value: number;
  rawValue: bigint;
  asset?: string;
  contract?: Hex;
  decimals?: number;
  logIndex?: number;
};

const randomId = (prefix: string) => `${prefix}_${randomBytes(8).toString("hex")}`;
const hex = (n: number | bigint) => `0x${n.toString(16)}`;

/** `{webhookId, id, createdAt, type: "ADDRESS_ACTIVITY", event: {network, activity[]}}`. */
export function alchemyAddressActivity(
  activity: readonly AlchemyActivity[],
  options: { id?: string; network?: string } = {},
): Record<string, unknown> {
  return {
    webhookId: "wh_k63lg72rxda78gce",
    id: options.id ?? randomId("whevt"),
    createdAt: new Date().toISOString().replace("Z", "123456Z"),
    type: "ADDRESS_ACTIVITY",
    event: {
      network: options.network ?? "ETH_MAINNET",
      activity: activity.map((a) => ({
        fromAddress: a.fromAddress,
        toAddress: a.toAddress,
        blockNum: hex(a.blockNum),
        hash: a.hash,
        value: a.value,
        erc721TokenId: null,
        erc1155Metadata: null,
        asset: a.asset ?? "ETH",
        category: a.category,
        rawContract:
          a.category === "token"
            ? {
                rawValue: `0x${a.rawValue.toString(16).padStart(64, "0")}`,
                address: a.contract,
                decimals: a.decimals ?? 18,
              }
            : { rawValue: hex(a.rawValue), decimals: 18 },
        typeTraceAddress: a.category === "internal" ? "call_0" : null,
        ...(a.category === "token"
          ? {
              log: {
                address: a.contract,
                topics: [],
                data: `0x${a.rawValue.toString(16).padStart(64, "0")}`,
                blockNumber: hex(a.blockNum),
                transactionHash: a.hash,
                transactionIndex: "0x0",
                blockHash: `0x${"0".repeat(64)}`,
                logIndex: hex(a.logIndex ?? 0),
                removed: false,
              },
            }
          : {}),
      })),
    },
  };
}

/** One log of a custom (GRAPHQL) webhook's `block.logs` result, with the fields of its transaction asked for. */
export type GraphqlLog = {
  txHash: Hex;
  account: Hex;
  topics: readonly Hex[];
  data: Hex;
  index: number;
  from: Hex;
  to: Hex | null;
  status: number;
};

/** `{webhookId, id, createdAt, type: "GRAPHQL", event: {data: {block: {hash, number, timestamp, logs[]}}, …}}`. */
export function alchemyGraphql(
  block: { hash: Hex; number: number; timestamp: number },
  logs: readonly GraphqlLog[],
  options: { id?: string } = {},
): Record<string, unknown> {
  return {
    webhookId: "wh_a55wfsvq5h8n8u3z",
    id: options.id ?? randomId("whevt"),
    createdAt: new Date().toISOString().replace("Z", "945953790Z"),
    type: "GRAPHQL",
    event: {
      data: {
        block: {
          hash: block.hash,
          number: block.number,
          timestamp: block.timestamp,
          logs: logs.map((l) => ({
            data: l.data,
            topics: l.topics,
            index: l.index,
            account: { address: l.account },
            transaction: {
              hash: l.txHash,
              nonce: 0,
              index: 0,
              from: { address: l.from },
              to: l.to === null ? null : { address: l.to },
              value: "0x0",
              gasPrice: "0x3b9aca00",
              maxFeePerGas: null,
              maxPriorityFeePerGas: null,
              gas: 100000,
              status: l.status,
              gasUsed: 50000,
              cumulativeGasUsed: 50000,
              effectiveGasPrice: "0x3b9aca00",
              createdContract: null,
            },
          })),
        },
      },
      sequenceNumber: "10000000000578619000",
      network: "ETH_MAINNET",
    },
  };
}

/** The QuickNode Streams batch metadata sent in the body (`metadata` delivery option "body"). */
export function quicknodeMetadata(
  dataset: string,
  fromBlock: number,
  toBlock = fromBlock,
): Record<string, unknown> {
  return {
    batch_start_range: fromBlock,
    batch_end_range: toBlock,
    blocks_reorged: null,
    data_size_bytes: 4096,
    dataset,
    end_range: -1,
    keep_distance_from_tip: 0,
    network: "ethereum-mainnet",
    start_range: fromBlock,
    stream_id: "f6ad6459-b5ad-4183-b370-1c1388e47e83",
    stream_name: "protoscan",
    stream_region: "usa_east",
  };
}

/** A Streams delivery: `data` as the dataset gives it (one entry per block), and its metadata. */
export function quicknodeDelivery(
  dataset: "logs" | "receipts" | "block_with_receipts" | "filter",
  data: unknown[],
  fromBlock: number,
): Record<string, unknown> {
  return { data, metadata: quicknodeMetadata(dataset, fromBlock) };
}

/** Headers Alchemy sends with `body`: `X-Alchemy-Signature` = hex HMAC-SHA256(body, signing key). */
export function alchemyHeaders(body: string, signingKey: string): Record<string, string> {
  return {
    "content-type": "application/json; charset=utf-8",
    "x-alchemy-signature": hmacHex(body, signingKey),
  };
}

/**
 * Headers QuickNode Streams sends with `body`: `x-qn-signature` = hex HMAC-SHA256(nonce + timestamp + body,
 * security token), `x-qn-timestamp` in Unix seconds, a fresh `x-qn-nonce`.
 */
export function quicknodeHeaders(
  body: string,
  token: string,
  options: { nonce?: string; timestampSeconds?: number } = {},
): Record<string, string> {
  const nonce = options.nonce ?? randomBytes(16).toString("hex");
  const timestamp = String(options.timestampSeconds ?? Math.floor(Date.now() / 1000));
  return {
    "content-type": "application/json",
    "x-qn-nonce": nonce,
    "x-qn-timestamp": timestamp,
    "x-qn-signature": hmacHex(nonce + timestamp + body, token),
  };
}
