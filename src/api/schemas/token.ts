import Type from "typebox";
import { Address } from "./common.ts";

/** Token (seed fields exactly): an item of `GET /api/tokens`. */
export const TokenSchema = Type.Object(
  {
    symbol: Type.String(),
    name: Type.String(),
    address: Address,
    decimals: Type.Integer(),
    protocol: Type.String(),
    color: Type.String({ description: "#rrggbb" }),
    logo: Type.String({ description: "logo URL" }),
    official: Type.Boolean(),
  },
  { $id: "Token" },
);
