import fc from "fast-check";
import { type AbiEvent, type AbiParameter, decodeAbiParameters, encodeEventTopics, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import { eventArgsViaViem } from "./_test/viaViem.ts";
import { decodeArgs, staticKind } from "./decodeArgs.ts";
import { decodeEventArgs } from "./decodeLog.ts";
import { namedArgs } from "./stringifyArgs.ts";

/** What decodeArgs must equal: viem's decoding, named and stringified; the error's class when it throws. */
function viaViem(params: readonly AbiParameter[], data: Hex): string {
  try {
    return JSON.stringify(namedArgs(params, decodeAbiParameters(params, data)));
  } catch (error) {
    return `throws ${(error as Error).name}`;
  }
}

function ours(params: readonly AbiParameter[], data: Hex): string {
  try {
    // Serialized, so that the keys' order (what the database stores) is compared too.
    return JSON.stringify(decodeArgs(params, data));
  } catch (error) {
    return `throws ${(error as Error).name}`;
  }
}

const STATIC_TYPES = [
  "address",
  "bool",
  "uint",
  "int",
  ...[8, 16, 24, 32, 40, 48, 56, 64, 128, 160, 248, 256].flatMap((n) => [`uint${n}`, `int${n}`]),
  ...[1, 2, 4, 20, 31, 32].map((n) => `bytes${n}`),
];
/** Types the fast path leaves to viem: a list with one of them is decoded by viem alone. */
const OTHER_TYPES = ["string", "bytes", "uint256[]", "address[2]", "uint7", "bytes33"];

const hexChars = (length: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: length, maxLength: length });

/** A 32-byte word as hex without 0x: small values, values at a type's edges, or any 256 bits. */
const word = fc.oneof(
  fc.bigInt({ min: 0n, max: 3n }).map((v) => v.toString(16).padStart(64, "0")),
  fc
    .constantFrom(
      (1n << 48n) - 1n,
      1n << 53n,
      (1n << 53n) - 1n,
      (1n << 255n) - 1n,
      1n << 255n,
      (1n << 256n) - 1n,
      (1n << 256n) - (1n << 53n),
      (1n << 256n) - (1n << 53n) + 1n,
    )
    .map((v) => v.toString(16).padStart(64, "0")),
  hexChars(40).map((a) => a.padStart(64, "0")),
  hexChars(64),
);

/** Data for `count` parameters: well formed, cut short, extended, odd, upper case or with a non-hex character. */
const dataFor = (count: number) =>
  fc
    .tuple(
      fc.array(word, { minLength: count, maxLength: count }),
      fc.constantFrom("as is", "as is", "as is", "short", "extra", "odd", "upper", "bad char", "empty"),
    )
    .map(([words, shape]): Hex => {
      const body = words.join("");
      if (shape === "short") return `0x${body.slice(0, Math.max(0, body.length - 64))}`;
      if (shape === "extra") return `0x${body}${"00".repeat(32)}`;
      if (shape === "odd") return `0x${body}0`;
      if (shape === "upper") return `0x${body.toUpperCase()}`;
      if (shape === "bad char") return `0x${body.slice(0, -1)}g`;
      if (shape === "empty") return "0x";
      return `0x${body}`;
    });

const params = (types: readonly string[]) =>
  fc
    .array(fc.tuple(fc.constantFrom(...types), fc.constantFrom("", "amount", "to", "x")), {
      minLength: 1,
      maxLength: 5,
    })
    .map((list): AbiParameter[] => list.map(([type, name]) => ({ type, name })));

describe("decodeArgs", () => {
  it("property: equals viem's decoding, named and stringified, or throws where it throws", () => {
    fc.assert(
      fc.property(
        params(STATIC_TYPES).chain((p) => fc.tuple(fc.constant(p), dataFor(p.length))),
        ([list, data]) => {
          expect(ours(list, data)).toBe(viaViem(list, data));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("property: lists with a type the fast path does not read are viem's alone", () => {
    fc.assert(
      fc.property(
        params([...STATIC_TYPES, ...OTHER_TYPES]).chain((p) =>
          fc.tuple(fc.constant(p), dataFor(p.length + 2)),
        ),
        ([list, data]) => {
          expect(ours(list, data)).toBe(viaViem(list, data));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("values: one of each kind", () => {
    const list: AbiParameter[] = [
      { type: "address", name: "to" },
      { type: "uint256", name: "amount" },
      { type: "int8", name: "" },
      { type: "bool", name: "ok" },
      { type: "bytes4", name: "tag" },
    ];
    const data: Hex = `0x${[
      "000000000000000000000000fb6916095ca1df60bb79ce92ce3ea74c37c5d359",
      (10n ** 18n).toString(16).padStart(64, "0"),
      "f".repeat(64),
      "1".padStart(64, "0"),
      "deadbeef".padEnd(64, "0"),
    ].join("")}`;
    expect(decodeArgs(list, data)).toEqual({
      to: "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
      amount: "1000000000000000000",
      arg2: "-1",
      ok: "true",
      tag: "0xdeadbeef",
    });
  });

  it("staticKind: elementary static types only", () => {
    expect(staticKind("uint")).toEqual({ type: "int", signed: false, small: false });
    expect(staticKind("int48")).toEqual({ type: "int", signed: true, small: true });
    expect(staticKind("uint56")).toEqual({ type: "int", signed: false, small: false });
    expect(staticKind("bytes32")).toEqual({ type: "bytes", chars: 64 });
    for (const other of OTHER_TYPES) expect(staticKind(other)).toBeNull();
  });
});

describe("decodeEventArgs", () => {
  it("property: equals viem's strict decodeEventLog, named and stringified, or null where it throws", () => {
    const input = fc.record({
      type: fc.constantFrom(...STATIC_TYPES, "string", "bytes", "uint256[]"),
      indexed: fc.boolean(),
      name: fc.constantFrom("", "from", "to", "value", "a", "b", "c"),
    });
    const cases = fc
      .uniqueArray(input, { minLength: 1, maxLength: 5, selector: (i) => i.name || Math.random() })
      .map(
        (inputs): AbiEvent => ({ type: "event", name: "Happened", inputs: inputs.slice(0, 4) }) as AbiEvent,
      )
      .chain((event) => {
        const indexed = event.inputs.filter((i) => i.indexed).length;
        const nonIndexed = event.inputs.length - indexed;
        return fc.tuple(
          fc.constant(event),
          fc.array(word, { minLength: Math.max(0, indexed - 1), maxLength: indexed + 1 }),
          nonIndexed > 0 ? dataFor(nonIndexed) : fc.constantFrom<Hex>("0x", "0x00"),
        );
      });
    fc.assert(
      fc.property(cases, ([event, topicWords, data]) => {
        // viem refuses events with more than three indexed inputs outright; so does the chain.
        fc.pre(event.inputs.filter((i) => i.indexed).length <= 3);
        const topics = [encodeEventTopics({ abi: [event] })[0]!, ...topicWords.map((w) => `0x${w}` as Hex)];
        // Serialized: the keys' order is what the database stores.
        expect(JSON.stringify(decodeEventArgs(event, topics, data))).toBe(
          JSON.stringify(eventArgsViaViem(event, topics, data)),
        );
      }),
      { numRuns: 3000 },
    );
  });
});
