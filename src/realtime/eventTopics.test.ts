import { describe, expect, test } from "vitest";
import { DEMO, ROUTER, USDC } from "../decode/_test/testRegistry.ts";
import { ALICE, BOB, swapTransaction, transferLog, ZERO } from "./_test/fixtures.ts";
import { eventTopics } from "./eventTopics.ts";

describe("eventTopics", () => {
  test("default: a swap matches all, its protocol, every party and every token, each once", () => {
    const topics = eventTopics({ type: "transaction", transaction: swapTransaction(), source: "poll" });
    expect(topics.sort()).toEqual(
      [
        "transactions",
        "protocol:demoswap",
        `address:${ALICE}`,
        `address:${ROUTER}`,
        `address:${BOB}`,
        `token:${DEMO}`,
        `token:${USDC}`,
      ].sort(),
    );
  });

  test("behavior: the zero address of a mint is no party; mixed-case input comes out lowercase", () => {
    const mixedBob = "0xFB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
    const tx = swapTransaction({
      from: mixedBob as `0x${string}`,
      to: DEMO,
      input: "0x40c10f19",
      logs: [transferLog(0, DEMO, ZERO, ALICE, 5n)],
    });
    expect(eventTopics({ type: "transaction", transaction: tx, source: "track" }).sort()).toEqual(
      [
        "transactions",
        "protocol:demoswap",
        `address:${BOB}`,
        `address:${DEMO}`,
        `address:${ALICE}`,
        `token:${DEMO}`,
      ].sort(),
    );
  });

  test("behavior: a removed transaction matches what it matched when stored", () => {
    const topics = eventTopics({
      type: "removed",
      removed: {
        hash: `0x${"ab".repeat(32)}`,
        blockNumber: 7,
        blockHash: `0x${"cd".repeat(32)}`,
        protocol: "demovault",
        source: "poll",
        parties: [ALICE, BOB],
        tokens: [USDC],
      },
    });
    expect(topics).toEqual([
      "transactions",
      "protocol:demovault",
      `address:${ALICE}`,
      `address:${BOB}`,
      `token:${USDC}`,
    ]);
  });
});
