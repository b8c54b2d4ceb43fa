import Type, { type Static } from "typebox";
import { IsoTime } from "./common.ts";
import { TransactionSchema } from "./transaction.ts";

/** Response schemas of the protocol stats, the overview and the global stats (SPEC §4 rows 8, 10, 11; §7). */

const Count = Type.Integer({ minimum: 0 });
const Usd = (description: string) => Type.Number({ minimum: 0, description });
const NullableInteger = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });

/** The figures of one protocol; `GET /api/protocol/:id/stats` adds `protocol`, the overview `id` and `name`. */
const protocolFigures = {
  tvl: Usd(
    "USD value of the tracked-token balances of the protocol's tvlAddresses (0 until prices are known)",
  ),
  dailyVolume: Usd(
    "USD volume of the protocol's transactions in the trailing 24 hours (0 until prices are known)",
  ),
  uniqueUsers: Type.Integer({
    minimum: 0,
    description: "distinct senders of its stored transactions, all time",
  }),
  transactionCount: Type.Integer({ minimum: 0, description: "its stored transactions, all time" }),
  updatedAt: Type.String({
    format: "date-time",
    description: "when these figures were computed (ISO 8601 UTC)",
  }),
};

export const ProtocolStatsSchema = Type.Object(
  { protocol: Type.String({ description: "protocol id" }), ...protocolFigures },
  {
    description: "statistics of one protocol (SPEC §7)",
    examples: [
      {
        protocol: "demoswap",
        tvl: 2150000.5,
        dailyVolume: 48210.25,
        uniqueUsers: 5,
        transactionCount: 1234,
        updatedAt: "2026-11-21T08:00:00.000Z",
      },
    ],
  },
);
export type ProtocolStatsJson = Static<typeof ProtocolStatsSchema>;

export const ProtocolSummarySchema = Type.Object(
  { id: Type.String({ description: "protocol id" }), name: Type.String(), ...protocolFigures },
  { description: "a configured protocol with its statistics" },
);
export type ProtocolSummaryJson = Static<typeof ProtocolSummarySchema>;

export const IndexerSchema = Type.Object(
  {
    chainHead: NullableInteger("latest block number of the node; null when unknown"),
    indexedBlock: NullableInteger("last block whose whole range is indexed; null before the first"),
    lagBlocks: NullableInteger("chainHead - indexedBlock"),
    lastRunAt: Type.Union([IsoTime, Type.Null()], { description: "end of the last polling cycle" }),
  },
  { description: "progress of the polling indexer" },
);
export type IndexerJson = Static<typeof IndexerSchema>;

export const StatsSchema = Type.Object(
  {
    totalTransactions: Type.Integer({ minimum: 0, description: "stored transactions" }),
    totalTokenTransfers: Type.Integer({ minimum: 0, description: "stored transfers of tracked tokens" }),
    uniqueAddresses: Type.Integer({
      minimum: 0,
      description: "distinct addresses in stored transactions: senders, recipients, token-transfer parties",
    }),
    trackedTokens: Type.Integer({ minimum: 0, description: "tokens in the configuration" }),
    protocols: Type.Integer({ minimum: 0, description: "protocols in the configuration" }),
    last24h: Type.Object({
      transactions: Type.Integer({
        minimum: 0,
        description: "stored transactions with a block time in the last 24 h",
      }),
      volumeUsd: Usd("USD volume of those transactions, all protocols (0 until prices are known)"),
    }),
    indexer: IndexerSchema,
  },
  {
    description: "global statistics",
    examples: [
      {
        totalTransactions: 1500,
        totalTokenTransfers: 3100,
        uniqueAddresses: 12,
        trackedTokens: 4,
        protocols: 2,
        last24h: { transactions: 1500, volumeUsd: 52000.5 },
        indexer: { chainHead: 1520, indexedBlock: 1520, lagBlocks: 0, lastRunAt: "2026-11-21T08:00:00.000Z" },
      },
    ],
  },
);

export const OverviewSchema = Type.Object(
  {
    protocols: Type.Array(ProtocolSummarySchema, {
      description: "every configured protocol, in config order",
    }),
    totals: Type.Object({
      transactions: Count,
      tokenTransfers: Count,
      addresses: Type.Integer({ minimum: 0, description: "as uniqueAddresses of GET /api/stats" }),
      tokens: Type.Integer({ minimum: 0, description: "tracked tokens" }),
    }),
    latestTransactions: Type.Array(TransactionSchema, {
      maxItems: 5,
      description: "the 5 newest, newest first",
    }),
    indexer: IndexerSchema,
  },
  { description: "what a landing page shows" },
);
