import {
  type AbiEvent,
  encodeAbiParameters,
  encodeEventTopics,
  erc20Abi,
  type Hex,
  pad,
  parseAbi,
  parseAbiItem,
} from "viem";
import { describe, expect, test } from "vitest";
import { eventArgsViaViem } from "./_test/viaViem.ts";
import { decodeEventValues } from "./decodeLog.ts";
import { namedArgs } from "./stringifyArgs.ts";

const ALICE = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";
const BOB = "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359";
const erc20Transfer = erc20Abi.find((i) => i.type === "event" && i.name === "Transfer") as AbiEvent;
const erc721Transfer = parseAbiItem(
  "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
) as AbiEvent;

/** What decodeLog returned before (viem's strict decodeEventLog, values in ABI order), or null. */
const viaViem = eventArgsViaViem;

function ours(event: AbiEvent, topics: Hex[], data: Hex): Record<string, unknown> | null {
  const values = decodeEventValues(event, topics, data);
  return values && namedArgs(event.inputs, values);
}

const transferTopics = encodeEventTopics({
  abi: erc20Abi,
  eventName: "Transfer",
  args: { from: ALICE, to: BOB },
});
const amount = encodeAbiParameters([{ type: "uint256" }], [10n ** 18n]);
const nft = [...transferTopics, pad("0x07")] as Hex[];

const unnamed = parseAbiItem("event Ping(address indexed, uint256, string)") as AbiEvent;
const unnamedTopics = [encodeEventTopics({ abi: [unnamed] })[0]!, pad(ALICE as Hex)] as Hex[];
const tupleEvent = parseAbi([
  "struct Order { address maker; uint256[] amounts; }",
  "event Placed(string indexed tag, Order order, bool ok)",
])[0] as AbiEvent;
const tupleData = encodeAbiParameters(
  tupleEvent.inputs.filter((i) => !i.indexed),
  [{ maker: BOB, amounts: [1n, 2n] }, true],
);
const tagHash = `0x${"11".repeat(32)}` as Hex;

describe("decodeEventValues", () => {
  const cases: [string, AbiEvent, Hex[], Hex][] = [
    ["default: ERC-20 Transfer", erc20Transfer, transferTopics as Hex[], amount],
    ["behavior: ERC-721 Transfer does not fit ERC-20 (empty data)", erc20Transfer, nft, "0x"],
    ["behavior: ERC-721 Transfer with its own ABI", erc721Transfer, nft, "0x"],
    [
      "behavior: ERC-20 Transfer does not fit ERC-721 (missing topic)",
      erc721Transfer,
      transferTopics as Hex[],
      amount,
    ],
    ["behavior: data too short", erc20Transfer, transferTopics as Hex[], "0x01"],
    [
      "behavior: extra data is ignored",
      erc20Transfer,
      transferTopics as Hex[],
      `${amount}${"00".repeat(32)}`,
    ],
    [
      "behavior: unnamed inputs",
      unnamed,
      unnamedTopics,
      encodeAbiParameters([{ type: "uint256" }, { type: "string" }], [5n, 'he said "hi"']),
    ],
    [
      "behavior: indexed string is its hash, tuple decoded",
      tupleEvent,
      [encodeEventTopics({ abi: [tupleEvent] })[0]!, tagHash],
      tupleData,
    ],
    [
      "error: garbage data",
      tupleEvent,
      [encodeEventTopics({ abi: [tupleEvent] })[0]!, tagHash],
      `0x${"ff".repeat(96)}`,
    ],
  ];
  for (const [name, event, topics, data] of cases) {
    test(name, () => {
      expect(ours(event, topics, data)).toEqual(viaViem(event, topics, data));
    });
  }

  test("args: values", () => {
    expect(ours(erc20Transfer, transferTopics as Hex[], amount)).toEqual({
      from: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      to: "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
      value: "1000000000000000000",
    });
    expect(ours(erc20Transfer, nft, "0x")).toBeNull();
    expect(ours(tupleEvent, [encodeEventTopics({ abi: [tupleEvent] })[0]!, tagHash], tupleData)).toEqual({
      tag: tagHash,
      order: { maker: "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", amounts: ["1", "2"] },
      ok: "true",
    });
  });
});
