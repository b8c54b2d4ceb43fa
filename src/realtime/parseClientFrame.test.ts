import { describe, expect, test } from "vitest";
import { MAX_CLIENT_FRAME_BYTES, parseClientFrame } from "./parseClientFrame.ts";
import type { TopicCatalog } from "./parseTopic.ts";

const catalog: TopicCatalog = { protocols: new Set(["demoswap"]), tokens: new Set() };
const text = (value: string) => parseClientFrame({ text: value, bytes: Buffer.byteLength(value) }, catalog);

describe("parseClientFrame", () => {
  test("default: subscribe with an id", () => {
    expect(text('{"op":"subscribe","topic":"transactions","id":7}')).toEqual({
      op: "subscribe",
      topic: "transactions",
      id: 7,
    });
  });

  test("args: unsubscribe without an id echoes null; extra keys are ignored", () => {
    expect(text('{"op":"unsubscribe","topic":"protocol:demoswap","extra":true}')).toEqual({
      op: "unsubscribe",
      topic: "protocol:demoswap",
      id: null,
    });
  });

  test("args: any JSON id is echoed as sent", () => {
    expect(text('{"op":"subscribe","topic":"transactions","id":{"n":[1,"a"]}}')).toMatchObject({
      id: { n: [1, "a"] },
    });
  });

  test("args: ping with and without id", () => {
    expect(text('{"op":"ping"}')).toEqual({ op: "ping", id: null, hasId: false });
    expect(text('{"op":"ping","id":"p1"}')).toEqual({ op: "ping", id: "p1", hasId: true });
  });

  test("args: address topic is canonical (lowercase)", () => {
    const frame = `{"op":"subscribe","topic":"address:0x${"AB".repeat(20)}"}`;
    expect(text(frame)).toMatchObject({ op: "subscribe", topic: `address:0x${"ab".repeat(20)}` });
  });

  test.each([
    ["not json", "INVALID_JSON", null],
    ['{"op":"subscribe"', "INVALID_JSON", null],
    ["[1,2]", "INVALID_MESSAGE", null],
    ['"subscribe"', "INVALID_MESSAGE", null],
    ["null", "INVALID_MESSAGE", null],
    ['{"id":3}', "INVALID_MESSAGE", 3],
    ['{"op":"publish","id":"x"}', "UNKNOWN_OP", "x"],
    ['{"op":"subscribe","id":1}', "INVALID_TOPIC", 1],
    ['{"op":"subscribe","topic":"weird","id":2}', "INVALID_TOPIC", 2],
    ['{"op":"unsubscribe","topic":"protocol:other","id":4}', "UNKNOWN_TOPIC", 4],
  ])("error: %s -> %s echoing id %j", (frame, code, id) => {
    expect(text(frame)).toMatchObject({ op: "error", code, id });
  });

  test("error: a frame over 16 KiB is FRAME_TOO_LARGE before it is parsed", () => {
    const big = JSON.stringify({ op: "ping", id: "x".repeat(MAX_CLIENT_FRAME_BYTES) });
    expect(text(big)).toMatchObject({ op: "error", code: "FRAME_TOO_LARGE", id: null });
    const exact = `{"op":"ping","id":"${"x".repeat(MAX_CLIENT_FRAME_BYTES - 21)}"}`;
    expect(Buffer.byteLength(exact)).toBe(MAX_CLIENT_FRAME_BYTES);
    expect(text(exact)).toMatchObject({ op: "ping", hasId: true });
  });

  test("error: binary frames are INVALID_MESSAGE", () => {
    expect(parseClientFrame({ binary: true, bytes: 10 }, catalog)).toMatchObject({
      op: "error",
      code: "INVALID_MESSAGE",
    });
  });
});
