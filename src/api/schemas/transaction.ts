import Type, { type Static } from "typebox";
import { Address, IsoTime, NullableAddress, Uint } from "./common.ts";

export const TokenTransferSchema = Type.Object({
  tokenAddress: Address,
  tokenSymbol: Type.String(),
  fromAddress: Address,
  toAddress: Address,
  amount: Uint,
  decimals: Type.Integer(),
  logIndex: Type.Integer(),
  valueUsd: Type.Union([Type.Number(), Type.Null()], {
    description:
      "amount / 10^decimals x the token's USD price at the block's time (price history, SPEC §10.1); null when no price is known for that time",
  }),
});

export const DecodedEventSchema = Type.Object({
  name: Type.String({ description: "event name" }),
  args: Type.Record(Type.String(), Type.Unknown(), { description: "decoded arguments keyed by name" }),
  logIndex: Type.Integer(),
  address: Address,
});

/** The Transaction resource (seed fields exactly, plus blockHash, transactionIndex, source). */
export const TransactionSchema = Type.Object(
  {
    txHash: Type.String({ description: "lowercase 0x hash" }),
    blockNumber: Type.Integer(),
    blockHash: Type.String(),
    transactionIndex: Type.Integer(),
    blockTimestamp: IsoTime,
    fromAddress: Address,
    toAddress: NullableAddress,
    contractAddress: NullableAddress,
    valueWei: Uint,
    gasUsed: Uint,
    gasPrice: Uint,
    status: Type.Boolean(),
    protocol: Type.String(),
    actionType: Type.String(),
    functionName: Type.String(),
    decodedData: Type.Object({
      args: Type.Record(Type.String(), Type.Unknown()),
      events: Type.Array(DecodedEventSchema),
    }),
    tokenTransfers: Type.Array(TokenTransferSchema),
    valueUsd: Type.Union([Type.Number(), Type.Null()], {
      description:
        "USD value at the block's time (SPEC §10.2): the larger of the tracked-token value into and out of the protocol's addresses, else the largest tracked-token transfer; null without a priced tracked-token transfer",
    }),
    source: Type.String({ description: "pipeline that stored it first: poll, webhook or track" }),
  },
  { $id: "Transaction" },
);

export type TransactionJson = Static<typeof TransactionSchema>;
