import { getAddress, isAddress } from "viem";
import { withoutNul } from "../internal/text.ts";

/**
 * Turn decoded ABI values into the JSON the API serves (seed: "values are strings, amounts as decimal
 * strings, addresses as hex"): bigints and numbers become decimal strings, booleans "true"/"false",
 * arrays stay arrays, structs become objects keyed by component name. Strings lose any U+0000, which the
 * database cannot store (internal/text.ts).
 */
export function stringifyValue(value: unknown): unknown {
  if (typeof value === "bigint" || typeof value === "number") return value.toString();
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "string") return withoutNul(value);
  if (Array.isArray(value)) return value.map(stringifyValue);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stringifyValue(v)]));
  }
  return String(value);
}

type Param = { name?: string | undefined; type: string; components?: readonly Param[] };

/**
 * Key positional decoded values by their ABI parameter names (`arg0`, `arg1`… for unnamed ones),
 * recursing into tuples so structs come out as named objects.
 */
export function namedArgs(params: readonly Param[], values: readonly unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  params.forEach((param, i) => {
    out[param.name || `arg${i}`] = nameValue(param, values[i]);
  });
  return out;
}

function nameValue(param: Param, value: unknown): unknown {
  // Addresses in decoded args are EIP-55, as the API shows them (viem returns topics lowercase).
  if (param.type === "address" && typeof value === "string" && isAddress(value, { strict: false })) {
    return getAddress(value);
  }
  if (param.type === "address[]" && Array.isArray(value)) {
    return value.map((v) => nameValue({ type: "address" }, v));
  }
  if (param.type.startsWith("tuple") && param.components) {
    if (param.type.endsWith("]") && Array.isArray(value)) {
      const element = { ...param, type: param.type.slice(0, param.type.lastIndexOf("[")) };
      return value.map((v) => nameValue(element, v));
    }
    if (Array.isArray(value)) return namedArgs(param.components, value);
    if (value !== null && typeof value === "object") {
      return namedArgs(
        param.components,
        param.components.map((c, i) => (value as Record<string, unknown>)[c.name || String(i)]),
      );
    }
  }
  return stringifyValue(value);
}
