import { describe, expect, test } from "vitest";
import { computeUnitsOf } from "./computeUnits.ts";

describe("computeUnitsOf", () => {
  test("default: listed methods", () => {
    expect(computeUnitsOf("eth_getLogs")).toBe(60);
    expect(computeUnitsOf("eth_call")).toBe(26);
    expect(computeUnitsOf("eth_blockNumber")).toBe(10);
    expect(computeUnitsOf("eth_chainId")).toBe(0);
    expect(computeUnitsOf("eth_getBlockReceipts")).toBe(20);
  });

  test("args: unlisted methods cost 20", () => {
    expect(computeUnitsOf("eth_gasPrice")).toBe(20);
    expect(computeUnitsOf("toString")).toBe(20);
  });
});
