import Type, { type Static } from "typebox";
import { Address, IsoTime } from "./common.ts";

/** `GET /api/search` (SPEC §4 row 12): each result type and its fields. */

const Hash = Type.String({ description: "lowercase 0x hash" });

export const TransactionResultSchema = Type.Object(
  {
    type: Type.Literal("transaction"),
    txHash: Hash,
    blockNumber: Type.Integer(),
    blockTimestamp: IsoTime,
    protocol: Type.String({ description: "protocol id it is attributed to" }),
    actionType: Type.String(),
  },
  { description: "a stored transaction whose hash is the term" },
);

export const TokenResultSchema = Type.Object(
  {
    type: Type.Literal("token"),
    address: Address,
    symbol: Type.String(),
    name: Type.String(),
    decimals: Type.Integer(),
    protocol: Type.String({ description: "id of the owning protocol" }),
    logo: Type.String({ description: "logo URL" }),
  },
  { description: "a tracked token whose address is the term, or whose symbol or name starts with it" },
);

export const AddressResultSchema = Type.Object(
  {
    type: Type.Literal("address"),
    address: Address,
    isContract: Type.Optional(
      Type.Boolean({ description: "whether it has code; absent when the node could not be asked" }),
    ),
    transactionCount: Type.Integer({ minimum: 0, description: "stored transactions it takes part in" }),
  },
  { description: "an address that is not a tracked token (any valid address answers)" },
);

export const BlockResultSchema = Type.Object(
  {
    type: Type.Literal("block"),
    blockNumber: Type.Integer(),
    blockHash: Type.Union([Hash, Type.Null()], { description: "null when protoscan keeps no header for it" }),
    blockTimestamp: Type.Union([IsoTime, Type.Null()]),
    transactions: Type.Array(Hash, { description: "hashes of its stored transactions, in block order" }),
  },
  { description: "a block whose number (or stored hash) is the term, with its stored transactions" },
);

export const ProtocolResultSchema = Type.Object(
  {
    type: Type.Literal("protocol"),
    id: Type.String(),
    name: Type.String(),
  },
  { description: "a protocol whose id or name starts with the term, or owning the contract searched" },
);

export const SearchResultSchema = Type.Union(
  [TransactionResultSchema, TokenResultSchema, AddressResultSchema, BlockResultSchema, ProtocolResultSchema],
  { description: "one match; `type` says which fields follow" },
);
export type SearchResultJson = Static<typeof SearchResultSchema>;
export type TokenResultJson = Static<typeof TokenResultSchema>;
export type ProtocolResultJson = Static<typeof ProtocolResultSchema>;

export const MAX_SEARCH_RESULTS = 20;

export const SearchResponseSchema = Type.Object(
  {
    query: Type.String({ description: "the term as searched (trimmed)" }),
    results: Type.Array(SearchResultSchema, {
      maxItems: MAX_SEARCH_RESULTS,
      description: "exact matches first, at most 20",
    }),
  },
  {
    examples: [
      {
        query: "demo",
        results: [
          {
            type: "token",
            address: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
            symbol: "DEMO",
            name: "Demo Token",
            decimals: 18,
            protocol: "demoswap",
            logo: "",
          },
          { type: "protocol", id: "demoswap", name: "DemoSwap" },
        ],
      },
    ],
  },
);
