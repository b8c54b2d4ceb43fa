import { keccak256 } from "viem";
import { expect, test } from "vitest";
import { loadUniswapArtifacts, ROUTER_PAIR_INIT_CODE_HASH } from "./uniswapArtifacts.ts";

test("default", () => {
  const { factory, pair, router, weth9 } = loadUniswapArtifacts();
  for (const artifact of [factory, pair, router, weth9]) {
    expect(artifact.bytecode).toMatch(/^0x[0-9a-f]+$/);
    expect(artifact.abi.length).toBeGreaterThan(0);
  }
  expect(
    router.abi.some((item) => item.type === "function" && item.name === "swapExactTokensForTokens"),
  ).toBe(true);
});

test("behavior: router init code hash matches the v2-core pair bytecode", () => {
  const { pair, router } = loadUniswapArtifacts();
  expect(keccak256(pair.bytecode)).toBe(ROUTER_PAIR_INIT_CODE_HASH);
  expect(router.bytecode).toContain(ROUTER_PAIR_INIT_CODE_HASH.slice(2));
});
