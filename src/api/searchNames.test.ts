import { describe, expect, test } from "vitest";
import type { Address, ProtocolConfig, TokenConfig } from "../config/schema.ts";
import { searchNames } from "./searchNames.ts";

const token = (symbol: string, name: string, i: number): TokenConfig => ({
  address: `0x${i.toString(16).padStart(40, "0")}` as Address,
  symbol,
  name,
  decimals: 18,
  protocol: "demoswap",
  color: "#000000",
  logo: "",
  official: false,
  exclusive: false,
});
const protocol = (id: string, name: string): ProtocolConfig => ({
  id,
  name,
  contracts: [],
  tvlAddresses: [],
  actions: {},
});

const config = {
  tokens: [token("DEMOX", "Extra", 1), token("DEMO", "Demo Token", 2), token("USDC", "Demo USD", 3)],
  protocols: [protocol("demoswap", "DemoSwap"), protocol("vault", "Demo")],
};
const names = (text: string) =>
  searchNames(config, text).map((r) => (r.type === "token" ? `token:${r.symbol}` : `protocol:${r.id}`));

describe("searchNames", () => {
  test("default: exact matches first, then prefixes, case-insensitive", () => {
    expect(names("demo")).toEqual([
      "token:DEMO", // exact symbol
      "protocol:vault", // exact name "Demo"
      "token:DEMOX", // symbol prefix
      "protocol:demoswap", // id prefix
      "token:USDC", // name prefix "Demo USD"
    ]);
  });

  test("default: a token result carries its metadata, EIP-55", () => {
    expect(searchNames(config, "usdc")).toEqual([
      {
        type: "token",
        address: "0x0000000000000000000000000000000000000003",
        symbol: "USDC",
        name: "Demo USD",
        decimals: 18,
        protocol: "demoswap",
        logo: "",
      },
    ]);
  });

  test("args: no match, blank, and infix text", () => {
    expect(names("zzz")).toEqual([]);
    expect(names("  ")).toEqual([]);
    expect(names("swap")).toEqual([]);
    expect(names(" DemoS ")).toEqual(["protocol:demoswap"]);
  });
});
