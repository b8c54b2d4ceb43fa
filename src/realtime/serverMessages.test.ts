import { getAddress } from "viem";
import { describe, expect, test } from "vitest";
import { apiTransactionJson } from "../../test/helpers/apiSerializer.ts";
import type { TokenConfig } from "../config/schema.ts";
import { DEMO, ROUTER, USDC } from "../decode/_test/testRegistry.ts";
import { swapTransaction } from "./_test/fixtures.ts";
import { eventMessage, serializeEventData, serverMessages } from "./serverMessages.ts";

const tokens: TokenConfig[] = (
  [
    { address: DEMO, symbol: "DEMO", decimals: 18 },
    { address: USDC, symbol: "USDC", decimals: 6 },
  ] as const
).map((t) => ({
  ...t,
  name: t.symbol,
  protocol: "demoswap",
  color: "",
  logo: "",
  official: true,
  exclusive: true,
}));
const transactionJson = apiTransactionJson({ tokens });

describe("serverMessages", () => {
  test("default: replies echo the id, null when absent", () => {
    expect(JSON.parse(serverMessages.subscribed("transactions", 3))).toEqual({
      type: "subscribed",
      topic: "transactions",
      id: 3,
    });
    expect(JSON.parse(serverMessages.unsubscribed("transactions", undefined))).toEqual({
      type: "unsubscribed",
      topic: "transactions",
      id: null,
    });
    expect(JSON.parse(serverMessages.error("UNKNOWN_OP", "nope", { a: 1 }))).toEqual({
      type: "error",
      code: "UNKNOWN_OP",
      message: "nope",
      id: { a: 1 },
    });
  });

  test("args: a bare ping gets the bare pong; a ping with an id gets it back", () => {
    expect(serverMessages.pong(null, false)).toBe('{"type":"pong"}');
    expect(JSON.parse(serverMessages.pong("p", true))).toEqual({ type: "pong", id: "p" });
  });
});

describe("serializeEventData / eventMessage", () => {
  test("default: a transaction is the Transaction JSON of the API", () => {
    const tx = swapTransaction();
    const data = JSON.parse(
      serializeEventData({ type: "transaction", transaction: tx, source: "webhook" }, transactionJson),
    );
    expect(data).toMatchObject({
      txHash: tx.hash,
      blockNumber: 7,
      blockTimestamp: "2026-11-21T08:00:00.000Z",
      fromAddress: getAddress(tx.from),
      toAddress: getAddress(ROUTER),
      valueWei: "0",
      gasUsed: "21000",
      gasPrice: "1",
      protocol: "demoswap",
      actionType: "swap",
      functionName: "swapExactTokensForTokens",
      source: "webhook",
      tokenTransfers: [
        {
          tokenAddress: getAddress(DEMO),
          tokenSymbol: "DEMO",
          amount: (10n ** 18n).toString(),
          decimals: 18,
        },
        { tokenAddress: getAddress(USDC), tokenSymbol: "USDC", amount: "2000000", decimals: 6 },
      ],
    });
    expect(data.decodedData.args.amountIn).toBe((10n ** 18n).toString());
  });

  test("behavior: a removal carries txHash, blockNumber and blockHash, lowercase", () => {
    const removed = {
      hash: `0x${"AB".repeat(32)}`,
      blockNumber: 9,
      blockHash: `0x${"CD".repeat(32)}`,
      protocol: "demoswap",
      source: "poll",
      parties: [],
      tokens: [],
    };
    expect(JSON.parse(serializeEventData({ type: "removed", removed }, transactionJson))).toEqual({
      txHash: `0x${"ab".repeat(32)}`,
      blockNumber: 9,
      blockHash: `0x${"cd".repeat(32)}`,
    });
  });

  test("behavior: the message splices the serialized data under its topic", () => {
    const message = eventMessage("removed", 'address:0x"odd', '{"txHash":"0x1"}');
    expect(JSON.parse(message)).toEqual({
      type: "removed",
      topic: 'address:0x"odd',
      data: { txHash: "0x1" },
    });
  });
});
