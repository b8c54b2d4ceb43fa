import type { AbiFunction, Hex } from "viem";
import type { Address } from "../config/schema.ts";
import type { AbiRegistry } from "./abiRegistry.ts";
import { decodeArgs } from "./decodeArgs.ts";

export type DecodedCall = {
  /** the function name, or the 4-byte selector when no ABI decodes the input */
  functionName: string;
  /** decoded arguments keyed by name (`{}` when undecodable) */
  args: Record<string, unknown>;
  decoded: boolean;
};

/**
 * Decode a transaction's input against the called contract's own ABI first, then every other ABI that
 * has the selector. Input shorter than a selector is a plain call (`""` name; the caller names it).
 */
export function decodeCall(registry: AbiRegistry, to: Address | null, input: Hex): DecodedCall {
  if (input.length < 10) return { functionName: "", args: {}, decoded: false };
  const selector = input.slice(0, 10).toLowerCase();
  const own = to ? registry.contractFunctions.get(to)?.get(selector) : undefined;
  const candidates: AbiFunction[] = own ? [own] : [];
  for (const fn of registry.functionsBySelector.get(selector) ?? []) if (fn !== own) candidates.push(fn);

  // Every candidate has this selector (the registry is keyed by it), so the parameters are decoded directly:
  // viem's `decodeFunctionData` would hash each candidate's signature again (keccak-256) to find it.
  const params: Hex = `0x${input.slice(10)}`;
  for (const fn of candidates) {
    try {
      const args = fn.inputs.length > 0 ? decodeArgs(fn.inputs, params) : {};
      return { functionName: fn.name, args, decoded: true };
    } catch {
      // input does not fit this candidate's parameters: try the next one
    }
  }
  return { functionName: selector, args: {}, decoded: false };
}
