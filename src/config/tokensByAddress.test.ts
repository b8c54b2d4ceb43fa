import { expect, test } from "vitest";
import type { TokenConfig } from "./schema.ts";
import { tokensByAddress } from "./tokensByAddress.ts";

const token = (address: `0x${string}`, symbol: string): TokenConfig => ({
  address,
  symbol,
  name: symbol,
  decimals: 18,
  protocol: "p",
  color: "#000000",
  logo: "",
  official: true,
  exclusive: true,
});

test("default: tokens by lowercase address, one map per token list", () => {
  const tokens = [token("0xaa", "A"), token("0xBB", "B")];
  const map = tokensByAddress({ tokens });
  expect([...map.keys()]).toEqual(["0xaa", "0xbb"]);
  expect(map.get("0xbb")?.symbol).toBe("B");
  expect(tokensByAddress({ tokens })).toBe(map);
});

test("behavior: a config copied with other tokens gets its own map", () => {
  const config = { tokens: [token("0xaa", "A")] };
  const first = tokensByAddress(config);
  const copy = { ...config, tokens: [token("0xcc", "C")] };
  expect([...tokensByAddress(copy).keys()]).toEqual(["0xcc"]);
  expect(tokensByAddress(config)).toBe(first);
});
