import { type AbiParameter, checksumAddress, decodeAbiParameters, type Hex } from "viem";
import { namedArgs } from "./stringifyArgs.ts";

/**
 * `namedArgs(params, decodeAbiParameters(params, data))`, and throws where that throws: the decoded values
 * keyed by parameter name, as the API serves them (stringifyArgs.ts).
 *
 * Why not just that: most calls and events of a protocol carry only static elementary values (addresses,
 * integers, booleans, `bytesN`), one 32-byte word each. viem decodes a word by converting the whole data to
 * bytes, slicing, converting the slice back to hex and parsing that; a 10,000-transaction backfill allocated
 * about 170 MB in it, more than anything but the responses themselves (docs/performance.md, "Memory"). For
 * such lists the words are read from the hex directly. Anything else (dynamic or nested types, short, odd or
 * non-hex data, a value out of its type's range) goes to viem, so the answer, error included, is viem's;
 * `decodeArgs.test.ts` checks both agree over generated values.
 */
export function decodeArgs(params: readonly AbiParameter[], data: Hex): Record<string, unknown> {
  return decodeWords(params, data) ?? namedArgs(params, decodeAbiParameters(params, data));
}

/**
 * The named values of `params` read from the 32-byte words of `data`, or null when that fast path does not
 * apply (see `decodeArgs`): then nothing is decided, the caller asks viem.
 */
function decodeWords(params: readonly AbiParameter[], data: string): Record<string, unknown> | null {
  const kinds = staticKinds(params);
  if (kinds === null || params.length === 0 || !holdsWords(data, params.length)) return null;
  const out: Record<string, unknown> = {};
  for (let i = 0; i < params.length; i++) {
    const value = wordValue(kinds[i]!, wordAt(data, i));
    if (value === null) return null;
    out[params[i]!.name || `arg${i}`] = value;
  }
  return out;
}

/**
 * Whether `data` is hex viem reads without refusing a character (even length, hex digits only) and holds at
 * least `count` 32-byte words: what the fast paths need before they read words from it.
 */
export function holdsWords(data: string, count: number): boolean {
  return data.length % 2 === 0 && data.length >= 2 + 64 * count && HEX.test(data);
}

/** The `index`th 32-byte word of `data`, as 64 hex digits without `0x`. */
export function wordAt(data: string, index: number): string {
  const start = 2 + 64 * index;
  return data.slice(start, start + 64);
}

/** The value of one word as the API serves it, or null where viem would refuse it (then viem decides). */
export function wordValue(kind: StaticKind, word: string): string | null {
  switch (kind.type) {
    case "address":
      // viem ignores the 12 bytes above the address too.
      return checksumAddress(`0x${word.slice(24).toLowerCase()}`);
    case "bool":
      return word === ZERO_WORD ? "false" : word === ONE_WORD ? "true" : null;
    case "bytes":
      return `0x${word.slice(0, kind.chars).toLowerCase()}`;
    case "int": {
      let value = BigInt(`0x${word}`);
      if (kind.signed && value > MAX_INT256) value -= TWO_POW_256;
      // viem returns types of at most 48 bits as numbers and refuses a word that is no safe integer.
      if (kind.small && (value > MAX_SAFE || value < -MAX_SAFE)) return null;
      return value.toString();
    }
  }
}

export type StaticKind =
  | { type: "address" }
  | { type: "bool" }
  | { type: "bytes"; chars: number }
  | { type: "int"; signed: boolean; small: boolean };

const HEX = /^0x[0-9a-fA-F]*$/;
const ZERO_WORD = "0".repeat(64);
const ONE_WORD = `${"0".repeat(63)}1`;
const MAX_INT256 = (1n << 255n) - 1n;
const TWO_POW_256 = 1n << 256n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INT =
  /^(u?)int(8|16|24|32|40|48|56|64|72|80|88|96|104|112|120|128|136|144|152|160|168|176|184|192|200|208|216|224|232|240|248|256)?$/;
const BYTES = /^bytes([1-9]|[12][0-9]|3[0-2])$/;

/** The kind of a static elementary ABI type, or null for any other type (dynamic, array, tuple, unknown). */
export function staticKind(type: string): StaticKind | null {
  if (type === "address") return { type: "address" };
  if (type === "bool") return { type: "bool" };
  const bytes = BYTES.exec(type);
  if (bytes) return { type: "bytes", chars: 2 * Number(bytes[1]) };
  const int = INT.exec(type);
  if (int) return { type: "int", signed: int[1] === "", small: Number(int[2] ?? 256) <= 48 };
  return null;
}

/** Parameter lists are the registry's own objects: their kinds are worked out once per list. */
const kindsOf = new WeakMap<readonly AbiParameter[], readonly StaticKind[] | null>();

function staticKinds(params: readonly AbiParameter[]): readonly StaticKind[] | null {
  let kinds = kindsOf.get(params);
  if (kinds === undefined) {
    const all = params.map((p) => staticKind(p.type));
    kinds = all.every((k) => k !== null) ? (all as StaticKind[]) : null;
    kindsOf.set(params, kinds);
  }
  return kinds;
}
