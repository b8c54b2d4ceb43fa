import Type, { type Static } from "typebox";
import { IsoTime } from "./common.ts";

/** Response schemas and query of the protocol and global history (SPEC §10.3). */

const pointFields = {
  time: Type.String({ format: "date-time", description: "the bucket's start (ISO 8601 UTC)" }),
  transactionCount: Type.Integer({
    minimum: 0,
    description: "stored transactions whose block time is in the bucket",
  }),
  uniqueUsers: Type.Integer({ minimum: 0, description: "distinct senders of those transactions" }),
  volumeUsd: Type.Number({
    minimum: 0,
    description: "sum of their valueUsd, each valued at block time (null counts 0)",
  }),
};

const envelope = {
  interval: Type.Union([Type.Literal("hour"), Type.Literal("day")]),
  from: IsoTime,
  to: IsoTime,
};

export const ProtocolHistorySchema = Type.Object(
  {
    protocol: Type.String({ description: "protocol id" }),
    ...envelope,
    points: Type.Array(
      Type.Object({
        ...pointFields,
        tvlUsd: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
          description:
            "TVL at the bucket's end: balances of the protocol's tvlAddresses then, priced then; null when a balance then is not known",
        }),
      }),
    ),
  },
  {
    description:
      "the protocol's transactions, users, volume and TVL per bucket, ascending, every bucket present",
    examples: [
      {
        protocol: "demoswap",
        interval: "day",
        from: "2026-11-20T00:00:00.000Z",
        to: "2026-11-20T12:00:00.000Z",
        points: [
          {
            time: "2026-11-20T00:00:00.000Z",
            transactionCount: 12,
            uniqueUsers: 5,
            volumeUsd: 1234.5,
            tvlUsd: 5678.9,
          },
        ],
      },
    ],
  },
);

export const GlobalHistorySchema = Type.Object(
  { ...envelope, points: Type.Array(Type.Object(pointFields)) },
  {
    description: "every protocol's transactions, users and volume together per bucket, ascending",
    examples: [
      {
        interval: "hour",
        from: "2026-11-20T00:00:00.000Z",
        to: "2026-11-20T00:30:00.000Z",
        points: [{ time: "2026-11-20T00:00:00.000Z", transactionCount: 3, uniqueUsers: 2, volumeUsd: 10.5 }],
      },
    ],
  },
);

export type ProtocolHistoryJson = Static<typeof ProtocolHistorySchema>;
