import Type, { type Static } from "typebox";
import { Address, IsoTime, NextCursor, Uint } from "./common.ts";
import { TokenSchema } from "./token.ts";

/** Responses of the token endpoints (SPEC §4 rows 1-4); they serialize the output, so nothing else leaks. */

export const TokenListSchema = Type.Object({ tokens: Type.Array(TokenSchema) });

/** `GET /api/tokens/:address`: the Token fields, its stored price, live supply and maintained counters. */
export const TokenDetailSchema = Type.Object(
  {
    ...TokenSchema.properties,
    priceUsd: Type.Union([Type.Number(), Type.Null()], {
      description: "USD per whole token, null when unpriced",
    }),
    priceSource: Type.Union([Type.Literal("api"), Type.Literal("dex"), Type.Literal("static"), Type.Null()], {
      description: "price tier that produced priceUsd (SPEC §6)",
    }),
    priceUpdatedAt: Type.Union([IsoTime, Type.Null()], { description: "when the price was true" }),
    totalSupply: Uint,
    holdersCount: Type.Integer({ minimum: 0, description: "addresses with a balance above zero" }),
    transfersCount: Type.Integer({ minimum: 0, description: "stored Transfer events" }),
  },
  { $id: "TokenDetail" },
);

export const HolderSchema = Type.Object({
  rank: Type.Integer({ minimum: 1, description: "1 for the largest balance; offset + position + 1" }),
  address: Address,
  balance: Uint,
  share: Type.Number({ minimum: 0, description: "balance / totalSupply (0 when the supply is 0)" }),
});

export const HoldersPageSchema = Type.Object({
  token: Address,
  holders: Type.Array(HolderSchema),
  total: Type.Integer({ minimum: 0, description: "holders with a balance above zero" }),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const TransferEventSchema = Type.Object(
  {
    txHash: Type.String({ description: "lowercase 0x hash" }),
    logIndex: Type.Integer(),
    blockNumber: Type.Integer(),
    blockTimestamp: IsoTime,
    tokenAddress: Address,
    tokenSymbol: Type.String(),
    fromAddress: Address,
    toAddress: Address,
    amount: Uint,
    decimals: Type.Integer(),
  },
  { $id: "TransferEvent" },
);

export const TransferEventsPageSchema = Type.Object({
  token: Address,
  events: Type.Array(TransferEventSchema),
  nextCursor: NextCursor,
});

export type TokenJson = Static<typeof TokenSchema>;
export type TokenDetailJson = Static<typeof TokenDetailSchema>;
export type TransferEventJson = Static<typeof TransferEventSchema>;
