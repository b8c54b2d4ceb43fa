import { describe, expect, test } from "vitest";
import { eventMessage } from "../../src/realtime/serverMessages.ts";
import { transactionHashOf } from "./transactionHashOf.ts";

const HASH = `0x${"ab".repeat(32)}`;
const data = JSON.stringify({
  txHash: HASH,
  blockNumber: 12,
  decodedData: { args: {}, events: [{ name: "Transfer", args: { txHash: `0x${"cd".repeat(32)}` } }] },
});

describe("transactionHashOf", () => {
  test("default: the hub's transaction message", () => {
    const frame = Buffer.from(eventMessage("transaction", "transactions", data));
    expect(transactionHashOf(frame)).toBe(HASH);
  });

  test("args: another topic", () => {
    const frame = Buffer.from(
      eventMessage("transaction", "address:0x00000000000000000000000000000000000000aa", data),
    );
    expect(transactionHashOf(frame)).toBe(HASH);
  });

  test("args: a removed message is not a transaction", () => {
    const removed = JSON.stringify({ txHash: HASH, blockNumber: 12, blockHash: HASH });
    expect(transactionHashOf(Buffer.from(eventMessage("removed", "transactions", removed)))).toBeNull();
  });

  test("args: replies", () => {
    expect(transactionHashOf(Buffer.from('{"type":"subscribed","topic":"transactions","id":1}'))).toBeNull();
    expect(transactionHashOf(Buffer.from('{"type":"pong"}'))).toBeNull();
  });

  test("error: truncated or malformed hash", () => {
    const frame = eventMessage("transaction", "transactions", data);
    expect(transactionHashOf(Buffer.from(frame.slice(0, frame.indexOf(HASH) + 10)))).toBeNull();
    const upper = eventMessage("transaction", "transactions", data.replace(HASH, HASH.toUpperCase()));
    expect(transactionHashOf(Buffer.from(upper))).toBeNull();
  });
});
