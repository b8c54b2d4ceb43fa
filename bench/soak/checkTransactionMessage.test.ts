import { expect, test } from "vitest";
import { checkTransactionMessage } from "./checkTransactionMessage.ts";

const DEMO = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

const data = {
  txHash: `0x${"ab".repeat(32)}`,
  blockNumber: 42,
  blockHash: `0x${"cd".repeat(32)}`,
  transactionIndex: 0,
  blockTimestamp: "2026-11-21T08:00:00.000Z",
  fromAddress: ALICE,
  toAddress: DEMO,
  contractAddress: null,
  valueWei: "0",
  gasUsed: "51234",
  gasPrice: "1000000000",
  status: true,
  protocol: "demoswap",
  actionType: "transfer",
  functionName: "transfer",
  decodedData: { args: { to: BOB, value: "1" }, events: [] },
  tokenTransfers: [
    {
      tokenAddress: DEMO,
      tokenSymbol: "DEMO",
      fromAddress: ALICE,
      toAddress: BOB,
      amount: "1",
      decimals: 18,
      logIndex: 0,
      valueUsd: 1e-18,
    },
  ],
  valueUsd: 1e-18,
  source: "poll",
};
const message = (topic: string, d: object = data) => ({ type: "transaction", topic, data: d });
const all = new Set(["transactions", "protocol:demoswap", `address:${BOB.toLowerCase()}`, `token:${DEMO}`]);

test("default", () => {
  for (const topic of all) expect(checkTransactionMessage(message(topic), all)).toBe(null);
});

test("error: topic not subscribed or not matching the transaction", () => {
  expect(checkTransactionMessage(message("protocol:demovault"), all)).toMatch(/not subscribed/);
  const stranger = "0x000000000000000000000000000000000000dEaD";
  const subscribed = new Set(["protocol:demovault", `address:${stranger}`, `token:${ALICE}`]);
  expect(checkTransactionMessage(message("protocol:demovault"), subscribed)).toMatch(/protocol demoswap/);
  expect(checkTransactionMessage(message(`address:${stranger}`), subscribed)).toMatch(/not a party/);
  expect(checkTransactionMessage(message(`token:${ALICE}`), subscribed)).toMatch(/no transfer of the token/);
});

test("error: malformed data", () => {
  expect(checkTransactionMessage(message("transactions", { ...data, valueWei: 0 }), all)).toMatch(/schema/);
  expect(checkTransactionMessage(message("transactions", { ...data, gasUsed: "1.5" }), all)).toMatch(
    /schema/,
  );
  const { tokenTransfers: _, ...missing } = data;
  expect(checkTransactionMessage(message("transactions", missing), all)).toMatch(/schema/);
  expect(
    checkTransactionMessage(
      message("transactions", { ...data, txHash: data.txHash.toUpperCase().replace("0X", "0x") }),
      all,
    ),
  ).toMatch(/lowercase/);
  expect(
    checkTransactionMessage(
      message("transactions", { ...data, blockTimestamp: "2026-11-21T08:00:00Z" }),
      all,
    ),
  ).toMatch(/milliseconds/);
  expect(
    checkTransactionMessage(message("transactions", { ...data, fromAddress: ALICE.toLowerCase() }), all),
  ).toMatch(/EIP-55/);
  expect(checkTransactionMessage({ type: "removed", topic: "transactions", data }, all)).toMatch(
    /not "transaction"/,
  );
  expect(checkTransactionMessage("text", all)).toBe("not a JSON object");
});
