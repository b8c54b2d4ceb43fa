import { parseUnits } from "viem";
import { expect, test } from "vitest";
import type { Address, ProtocolConfig, TokenConfig } from "../config/schema.ts";
import { sumTvl } from "./sumTvl.ts";

const addr = (i: number) => `0x${i.toString(16).padStart(40, "0")}` as Address;
const [USDC, WETH, RWD] = [addr(1), addr(2), addr(3)];
const token = (address: Address, decimals: number): TokenConfig => ({
  address,
  symbol: "T",
  name: "T",
  decimals,
  protocol: "swap",
  color: "#888888",
  logo: "",
  official: false,
  exclusive: true,
});
const protocol = (id: string, tvlAddresses: Address[]): ProtocolConfig => ({
  id,
  name: id,
  contracts: [],
  tvlAddresses,
  actions: {},
});
const at = new Date("2026-11-21T08:00:00.000Z");
const tokens = [token(USDC, 6), token(WETH, 18), token(RWD, 18)];
const prices = new Map([
  [USDC, { usd: 1, source: "static" as const, at }],
  [WETH, { usd: 3000, source: "dex" as const, at }],
  [RWD, null],
]);

test("default: balances of the tvl addresses x price, scaled by decimals, per protocol", () => {
  const [pair, vault, other] = [addr(10), addr(11), addr(12)];
  const balances = [
    { token: USDC, holder: pair, balance: parseUnits("1500000", 6) },
    { token: WETH, holder: pair, balance: parseUnits("500", 18) },
    { token: RWD, holder: vault, balance: parseUnits("5000000", 18) },
    { token: USDC, holder: vault, balance: parseUnits("0.25", 6) },
    { token: WETH, holder: other, balance: parseUnits("1", 18) },
  ];
  const tvl = sumTvl(
    [protocol("swap", [pair]), protocol("vault", [vault]), protocol("none", [])],
    tokens,
    balances,
    prices,
  );
  expect(tvl).toEqual(
    new Map([
      ["swap", 1_500_000 + 500 * 3000],
      ["vault", 0.25],
      ["none", 0],
    ]),
  );
});

test("behavior: an address shared by two protocols counts for both, once each", () => {
  const shared = addr(20);
  const balances = [{ token: WETH, holder: shared, balance: parseUnits("2", 18) }];
  const tvl = sumTvl([protocol("a", [shared, shared]), protocol("b", [shared])], tokens, balances, prices);
  expect(tvl).toEqual(
    new Map([
      ["a", 6000],
      ["b", 6000],
    ]),
  );
});
