import { describe, expect, test } from "vitest";
import { parseTopic, type TopicCatalog, topicCatalog } from "./parseTopic.ts";

const TOKEN = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
const catalog: TopicCatalog = topicCatalog({
  protocols: [{ id: "demoswap", name: "DemoSwap", contracts: [], tvlAddresses: [], actions: {} }],
  tokens: [
    {
      address: TOKEN,
      symbol: "DEMO",
      name: "Demo",
      decimals: 18,
      protocol: "demoswap",
      color: "",
      logo: "",
      official: true,
      exclusive: true,
    },
  ],
});

describe("parseTopic", () => {
  test("default: transactions", () => {
    expect(parseTopic("transactions", catalog)).toEqual({ ok: true, topic: "transactions" });
  });

  test("args: a configured protocol", () => {
    expect(parseTopic("protocol:demoswap", catalog)).toEqual({ ok: true, topic: "protocol:demoswap" });
  });

  test("args: an address in any case comes out lowercase", () => {
    const mixed = "0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    expect(parseTopic(`address:${mixed}`, catalog)).toEqual({
      ok: true,
      topic: `address:${mixed.toLowerCase()}`,
    });
  });

  test("args: a tracked token in upper case comes out lowercase", () => {
    expect(parseTopic(`token:0x${TOKEN.slice(2).toUpperCase()}`, catalog)).toEqual({
      ok: true,
      topic: `token:${TOKEN}`,
    });
  });

  test("error: unknown protocol and untracked token are UNKNOWN_TOPIC", () => {
    expect(parseTopic("protocol:nope", catalog)).toMatchObject({ ok: false, code: "UNKNOWN_TOPIC" });
    expect(parseTopic("protocol:DemoSwap", catalog)).toMatchObject({ ok: false, code: "UNKNOWN_TOPIC" });
    expect(parseTopic(`token:0x${"12".repeat(20)}`, catalog)).toMatchObject({
      ok: false,
      code: "UNKNOWN_TOPIC",
      message: `token 0x${"12".repeat(20)} is not tracked`,
    });
  });

  test.each([
    [undefined],
    [42],
    [""],
    ["transaction"],
    ["Transactions"],
    ["protocol:"],
    ["protocol"],
    ["address:"],
    ["address:0x1234"],
    [`address:${"ab".repeat(20)}`],
    [`address:0x${"zz".repeat(20)}`],
    [`address:0x${"ab".repeat(21)}`],
    ["token:DEMO"],
    ["block:1"],
    [`protocol:${"a".repeat(200)}`],
  ])("error: malformed %j is INVALID_TOPIC", (raw) => {
    expect(parseTopic(raw, catalog)).toMatchObject({ ok: false, code: "INVALID_TOPIC" });
  });
});
