import Type, { type Static } from "typebox";
import { Address, IsoTime } from "./common.ts";

/** One bucket of `GET /api/tokens/:address/price-history` (SPEC §10.1). */
export const PricePointSchema = Type.Object({
  time: Type.String({ format: "date-time", description: "the bucket's start (UTC hour or day)" }),
  priceUsd: Type.Union([Type.Number(), Type.Null()], {
    description:
      "the price in effect at the bucket's end (now, for the current bucket); null where none is known",
  }),
  source: Type.Union([Type.Literal("api"), Type.Literal("dex"), Type.Literal("static"), Type.Null()], {
    description: "the tier that priced it; null with a null price",
  }),
});

/** `GET /api/tokens/:address/price-history` (SPEC §10.1). */
export const PriceHistorySchema = Type.Object(
  {
    token: Address,
    interval: Type.Union([Type.Literal("hour"), Type.Literal("day")]),
    from: IsoTime,
    to: IsoTime,
    points: Type.Array(PricePointSchema, {
      description: "one per bucket from `from`'s to `to`'s, ascending",
    }),
  },
  { $id: "PriceHistory" },
);

export type PriceHistoryJson = Static<typeof PriceHistorySchema>;
