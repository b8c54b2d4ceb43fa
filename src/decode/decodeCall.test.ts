import { type AbiFunction, decodeFunctionData, encodeFunctionData, type Hex, parseAbi } from "viem";
import { describe, expect, test } from "vitest";
import { DEMO, ROUTER, routerAbi, testRegistry, USDC, VAULT, vaultAbi } from "./_test/testRegistry.ts";
import { decodeCall } from "./decodeCall.ts";
import { namedArgs } from "./stringifyArgs.ts";

const BOB = "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359";

/** What decodeCall returned before, for one candidate: viem's decodeFunctionData. */
function viaViem(fn: AbiFunction, input: Hex) {
  try {
    const { args } = decodeFunctionData({ abi: [fn], data: input });
    return { functionName: fn.name, args: namedArgs(fn.inputs, args ?? []), decoded: true };
  } catch {
    return { functionName: input.slice(0, 10), args: {}, decoded: false };
  }
}

const swap = routerAbi.find((f) => f.name === "swapExactTokensForTokens") as AbiFunction;
const claim = vaultAbi.find((f) => f.type === "function" && f.name === "claim") as AbiFunction;
const swapInput = encodeFunctionData({
  abi: routerAbi,
  functionName: "swapExactTokensForTokens",
  args: [10n ** 18n, 5n, [DEMO, USDC], BOB, 123n],
});

describe("decodeCall", () => {
  const registry = testRegistry();

  test("default: the called contract's function, args named and EIP-55", () => {
    const decoded = decodeCall(registry, ROUTER, swapInput);
    expect(decoded).toEqual(viaViem(swap, swapInput));
    expect(decoded.args).toMatchObject({ to: "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", deadline: "123" });
  });

  test("behavior: a function without inputs", () => {
    const input = encodeFunctionData({ abi: vaultAbi, functionName: "claim" });
    expect(decodeCall(registry, VAULT, input)).toEqual(viaViem(claim, input));
    expect(decodeCall(registry, VAULT, input)).toEqual({ functionName: "claim", args: {}, decoded: true });
  });

  test("behavior: input that does not fit the parameters keeps the selector", () => {
    const input = swapInput.slice(0, 74) as Hex;
    expect(decodeCall(registry, ROUTER, input)).toEqual(viaViem(swap, input));
    expect(decodeCall(registry, ROUTER, input).decoded).toBe(false);
  });

  test("behavior: selector only, for a function with inputs", () => {
    const input = swapInput.slice(0, 10) as Hex;
    expect(decodeCall(registry, ROUTER, input)).toEqual(viaViem(swap, input));
  });

  test("behavior: unknown selector", () => {
    expect(decodeCall(registry, ROUTER, "0xdeadbeef")).toEqual({
      functionName: "0xdeadbeef",
      args: {},
      decoded: false,
    });
  });

  test("behavior: another ABI's function with the selector when the callee has none", () => {
    const [deposit] = parseAbi(["function deposit(uint256 amount)"]);
    const input = encodeFunctionData({ abi: [deposit], args: [7n] });
    expect(decodeCall(registry, null, input)).toEqual({
      functionName: "deposit",
      args: { amount: "7" },
      decoded: true,
    });
  });
});
