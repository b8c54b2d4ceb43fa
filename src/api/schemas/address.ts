import Type from "typebox";
import { Address, NextCursor, Uint } from "./common.ts";
import { TransactionSchema } from "./transaction.ts";

/** Response schemas of the address endpoints (SPEC §4 rows 13 and 14). */

export const TokenBalanceSchema = Type.Object(
  {
    contractAddress: Address,
    tokenBalance: Uint,
    symbol: Type.String(),
    name: Type.String(),
    decimals: Type.Integer(),
    logo: Type.String({ description: "logo URL" }),
  },
  {
    description: "a tracked token the address holds, from the balance cache (balanceOf at the indexed block)",
  },
);

export const AddressViewSchema = Type.Object(
  {
    address: Address,
    balance: Type.String({
      pattern: "^[0-9]+$",
      description: "native balance in wei, live from the node (cached 5 s)",
    }),
    isContract: Type.Boolean({ description: "whether the address has code" }),
    tokenBalances: Type.Array(TokenBalanceSchema, { description: "non-zero balances only, in config order" }),
    transactionCount: Type.Integer({ minimum: 0, description: "stored transactions it takes part in" }),
  },
  {
    description: "the address view (seed fields, plus transactionCount)",
    examples: [
      {
        address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        balance: "9999998765432100000000",
        isContract: false,
        tokenBalances: [
          {
            contractAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
            tokenBalance: "499900000000000000000000",
            symbol: "DEMO",
            name: "Demo Token",
            decimals: 18,
            logo: "",
          },
        ],
        transactionCount: 42,
      },
    ],
  },
);

export const AddressTransactionsPageSchema = Type.Object({
  address: Address,
  transactions: Type.Array(TransactionSchema, { description: "newest first (block number, then index)" }),
  nextCursor: NextCursor,
});

export const ProtocolTransactionsPageSchema = Type.Object({
  protocol: Type.String({ description: "protocol id" }),
  transactions: Type.Array(TransactionSchema, { description: "newest first (block number, then index)" }),
  nextCursor: NextCursor,
});

/** `offset` of the transaction lists: no default, so that giving it together with `cursor` can be refused. */
export const ListOffset = Type.Integer({
  minimum: 0,
  maximum: 10_000,
  description: "rows to skip (default 0); not with `cursor`",
});
