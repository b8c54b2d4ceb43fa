import Type from "typebox";

/** Shared request and response schemas (they also produce the OpenAPI document). */

export const AddressParam = Type.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  description: "20-byte hex address, any case",
  examples: ["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"],
});

export const TxHashParam = Type.String({
  pattern: "^0x[0-9a-fA-F]{64}$",
  description: "32-byte transaction hash, any case",
  examples: ["0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b"],
});

export const Address = Type.String({ description: "EIP-55 checksummed address" });
export const NullableAddress = Type.Union([Type.String(), Type.Null()], {
  description: "EIP-55 address or null",
});
export const Uint = Type.String({ pattern: "^[0-9]+$", description: "uint256 as a decimal string" });
export const IsoTime = Type.String({ format: "date-time", description: "ISO 8601 UTC with milliseconds" });

export const Limit = Type.Integer({ minimum: 1, maximum: 100, default: 25, description: "page size" });
export const Offset = Type.Integer({ minimum: 0, maximum: 10_000, default: 0, description: "rows to skip" });

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
  },
  { $id: "Problem", description: "RFC 9457 problem details" },
);

export const Cursor = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "opaque cursor from a previous page's nextCursor; continues after its last item",
});

export const NextCursor = Type.Union([Type.String(), Type.Null()], {
  description: "pass as `cursor` to get the next page; null on the last page",
});

export const BlockNumberParam = Type.Integer({ minimum: 0, maximum: 1e15, description: "block number" });
