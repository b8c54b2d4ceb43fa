import Type, { type Static } from "typebox";
import { Address } from "./common.ts";

/** `GET /api/protocols`: the configured protocols with their contracts' names, for labels in the explorer. */
export const ProtocolListSchema = Type.Object(
  {
    protocols: Type.Array(
      Type.Object({
        id: Type.String({ description: "protocol id" }),
        name: Type.String(),
        contracts: Type.Array(
          Type.Object({
            name: Type.String({ description: "the contract's name in the configuration" }),
            address: Address,
            exclusive: Type.Boolean({
              description: "scanned by the polling indexer (false: a shared contract reached via track-tx)",
            }),
          }),
        ),
        tvlAddresses: Type.Array(Address, { description: "whose tracked-token holdings count as its TVL" }),
        tokens: Type.Array(Address, { description: "tracked tokens that belong to it" }),
      }),
      { description: "every configured protocol, in config order" },
    ),
  },
  {
    examples: [
      {
        protocols: [
          {
            id: "demoswap",
            name: "DemoSwap",
            contracts: [
              { name: "Router", address: "0x5FbDB2315678afecb367f032d93F642f64180aa3", exclusive: true },
            ],
            tvlAddresses: ["0x5FbDB2315678afecb367f032d93F642f64180aa3"],
            tokens: ["0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"],
          },
        ],
      },
    ],
  },
);
export type ProtocolListJson = Static<typeof ProtocolListSchema>;
