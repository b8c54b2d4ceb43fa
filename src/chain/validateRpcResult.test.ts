import { describe, expect, test } from "vitest";
import { validateRpcResult } from "./validateRpcResult.ts";

// Answers shaped like a node's (anvil / geth field names, hex quantities), for block 0x10.
const BLOCK_HASH = `0x${"b".repeat(64)}`;
const OTHER_BLOCK = `0x${"c".repeat(64)}`;
const TX_A = `0x${"a1".repeat(32)}`;
const TX_B = `0x${"a2".repeat(32)}`;
const TOKEN = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

function log(tx: string, logIndex: number, overrides: Record<string, unknown> = {}) {
  return {
    address: TOKEN,
    topics: [TRANSFER],
    data: "0x",
    blockNumber: "0x10",
    blockHash: BLOCK_HASH,
    transactionHash: tx,
    transactionIndex: tx === TX_A ? "0x0" : "0x1",
    logIndex: `0x${logIndex.toString(16)}`,
    removed: false,
    ...overrides,
  };
}

function receipt(tx: string, index: number, logs: unknown[], overrides: Record<string, unknown> = {}) {
  return {
    transactionHash: tx,
    transactionIndex: `0x${index.toString(16)}`,
    blockNumber: "0x10",
    blockHash: BLOCK_HASH,
    status: "0x1",
    logs,
    ...overrides,
  };
}

const receipts = () => [receipt(TX_A, 0, [log(TX_A, 0), log(TX_A, 1)]), receipt(TX_B, 1, [log(TX_B, 2)])];

const block = (transactions: unknown[], overrides: Record<string, unknown> = {}) => ({
  number: "0x10",
  hash: BLOCK_HASH,
  parentHash: OTHER_BLOCK,
  transactions,
  ...overrides,
});

const fullTx = (hash: string, overrides: Record<string, unknown> = {}) => ({
  hash,
  blockNumber: "0x10",
  blockHash: BLOCK_HASH,
  ...overrides,
});

const filter = { address: [TOKEN], fromBlock: "0xf", toBlock: "0x11" };

describe("validateRpcResult", () => {
  test("default: consistent answers pass", () => {
    expect(validateRpcResult("eth_getLogs", [filter], [log(TX_A, 0), log(TX_A, 1), log(TX_B, 2)])).toBe(
      undefined,
    );
    expect(validateRpcResult("eth_getBlockReceipts", ["0x10"], receipts())).toBe(undefined);
    expect(validateRpcResult("eth_getBlockReceipts", [BLOCK_HASH], receipts())).toBe(undefined);
    expect(validateRpcResult("eth_getBlockReceipts", [{ blockHash: BLOCK_HASH }], receipts())).toBe(
      undefined,
    );
    expect(validateRpcResult("eth_getTransactionReceipt", [TX_A], receipts()[0])).toBe(undefined);
    expect(
      validateRpcResult("eth_getBlockByNumber", ["0x10", true], block([fullTx(TX_A), fullTx(TX_B)])),
    ).toBe(undefined);
    expect(validateRpcResult("eth_getBlockByNumber", ["0x10", false], block([TX_A, TX_B]))).toBe(undefined);
    expect(validateRpcResult("eth_getBlockByNumber", ["latest", false], block([]))).toBe(undefined);
    expect(validateRpcResult("eth_getBlockByHash", [BLOCK_HASH, false], block([]))).toBe(undefined);
    expect(validateRpcResult("eth_getTransactionByHash", [TX_A], fullTx(TX_A))).toBe(undefined);
  });

  test("default: not found and unchecked methods pass", () => {
    expect(validateRpcResult("eth_getBlockByNumber", ["0x99", false], null)).toBe(undefined);
    expect(validateRpcResult("eth_getTransactionReceipt", [TX_A], null)).toBe(undefined);
    expect(validateRpcResult("eth_getBlockReceipts", ["0x99"], null)).toBe(undefined);
    expect(validateRpcResult("eth_call", [{}, "latest"], "0x2a")).toBe(undefined);
    expect(validateRpcResult("eth_blockNumber", [], "0x10")).toBe(undefined);
  });

  test("default: fields a provider omits are not required", () => {
    const bare = { address: TOKEN, topics: [TRANSFER], data: "0x", blockNumber: "0x10", logIndex: "0x0" };
    expect(validateRpcResult("eth_getLogs", [filter], [bare])).toBe(undefined);
    const pending = { ...bare, blockNumber: null, logIndex: null };
    expect(validateRpcResult("eth_getLogs", [filter], [pending, pending])).toBe(undefined);
    expect(
      validateRpcResult("eth_getBlockByNumber", ["0x10", true], block([{ hash: TX_A }, { hash: TX_B }])),
    ).toBe(undefined);
  });

  describe("eth_getLogs", () => {
    test("error: duplicate log index in one block", () => {
      expect(validateRpcResult("eth_getLogs", [filter], [log(TX_A, 0), log(TX_A, 1), log(TX_B, 1)])).toEqual({
        problem: "eth_getLogs returned log index 1 of block 16 twice",
        block: 16n,
      });
    });

    test("default: the same log index in two blocks", () => {
      const next = log(TX_B, 0, { blockNumber: "0x11", blockHash: OTHER_BLOCK });
      expect(validateRpcResult("eth_getLogs", [filter], [log(TX_A, 0), next])).toBe(undefined);
    });

    test("error: a log outside the requested range", () => {
      expect(validateRpcResult("eth_getLogs", [filter], [log(TX_A, 0, { blockNumber: "0x12" })])).toEqual({
        problem: "eth_getLogs returned a log of block 18 outside the range",
        block: 18n,
      });
      expect(validateRpcResult("eth_getLogs", [filter], [log(TX_A, 0, { blockNumber: "0xe" })])?.block).toBe(
        14n,
      );
    });

    test("error: logs of one block naming two hashes", () => {
      const logs = [log(TX_A, 0), log(TX_B, 1, { blockHash: OTHER_BLOCK })];
      expect(validateRpcResult("eth_getLogs", [filter], logs)).toEqual({
        problem: "eth_getLogs returned logs naming two hashes for block 16",
        block: 16n,
      });
    });

    test("error: a log of another block than the blockHash filter", () => {
      expect(validateRpcResult("eth_getLogs", [{ blockHash: OTHER_BLOCK }], [log(TX_A, 0)])?.problem).toMatch(
        /^eth_getLogs returned a log of block 0xbbbb.* for block 0xcccc/,
      );
    });

    test("error: a log of an address not filtered", () => {
      const stranger = log(TX_A, 0, { address: "0x000000000000000000000000000000000000dead" });
      expect(validateRpcResult("eth_getLogs", [filter], [stranger])?.problem).toBe(
        "eth_getLogs returned a log of 0x000000000000000000000000000000000000dead, not a filtered address",
      );
      // addresses compare case-insensitively; a single address may be a string
      const upper = log(TX_A, 0, { address: TOKEN.toUpperCase().replace("0X", "0x") });
      expect(validateRpcResult("eth_getLogs", [{ ...filter, address: TOKEN }], [upper])).toBe(undefined);
    });

    test("error: a log that does not match the topic filter", () => {
      const topics = [[TRANSFER, `0x${"1".repeat(64)}`], null];
      expect(validateRpcResult("eth_getLogs", [{ ...filter, topics }], [log(TX_A, 0)])).toBe(undefined);
      expect(
        validateRpcResult("eth_getLogs", [{ ...filter, topics: [`0x${"1".repeat(64)}`] }], [log(TX_A, 0)])
          ?.problem,
      ).toBe("eth_getLogs returned a log that does not match the topic filter");
    });

    test("error: not an array", () => {
      expect(validateRpcResult("eth_getLogs", [filter], { logs: [] })).toEqual({
        problem: "eth_getLogs result is not an array",
      });
    });
  });

  describe("eth_getBlockReceipts", () => {
    test("error: duplicate log index across the block's receipts", () => {
      const set = [receipt(TX_A, 0, [log(TX_A, 0), log(TX_A, 1)]), receipt(TX_B, 1, [log(TX_B, 1)])];
      expect(validateRpcResult("eth_getBlockReceipts", ["0x10"], set)).toEqual({
        problem: "eth_getBlockReceipts returned log index 1 of block 16 twice",
        block: 16n,
      });
    });

    test("error: receipts of another block number or hash", () => {
      expect(validateRpcResult("eth_getBlockReceipts", ["0x11"], receipts())).toEqual({
        problem: "eth_getBlockReceipts asked for block 17, got a receipt of block 16",
        block: 17n,
      });
      expect(validateRpcResult("eth_getBlockReceipts", [OTHER_BLOCK], receipts())?.problem).toMatch(
        /^eth_getBlockReceipts asked for block 0xcccc.*, got a receipt of 0xbbbb/,
      );
    });

    test("error: receipts of two blocks", () => {
      const set = [receipts()[0], receipt(TX_B, 1, [], { blockHash: OTHER_BLOCK })];
      expect(validateRpcResult("eth_getBlockReceipts", ["0x10"], set)).toEqual({
        problem: "eth_getBlockReceipts returned receipts of two blocks",
        block: 16n,
      });
    });

    test("error: the same transaction twice, or two receipts at one index", () => {
      const twice = [receipts()[0], receipt(TX_A, 1, [])];
      expect(validateRpcResult("eth_getBlockReceipts", ["0x10"], twice)?.problem).toBe(
        `eth_getBlockReceipts returned the receipt of ${TX_A} twice`,
      );
      const sameIndex = [receipts()[0], receipt(TX_B, 0, [])];
      expect(validateRpcResult("eth_getBlockReceipts", ["0x10"], sameIndex)?.problem).toBe(
        "eth_getBlockReceipts returned two receipts at transaction index 0",
      );
    });

    test("error: a log naming another block or transaction than its receipt", () => {
      const otherBlock = [receipt(TX_A, 0, [log(TX_A, 0, { blockHash: OTHER_BLOCK })])];
      expect(validateRpcResult("eth_getBlockReceipts", ["0x10"], otherBlock)?.problem).toBe(
        `eth_getBlockReceipts: a log of ${TX_A} names another block`,
      );
      const otherNumber = [receipt(TX_A, 0, [log(TX_A, 0, { blockNumber: "0x11" })])];
      expect(validateRpcResult("eth_getBlockReceipts", ["0x10"], otherNumber)?.problem).toBe(
        `eth_getBlockReceipts: a log of ${TX_A} names another block`,
      );
      const otherTx = [receipt(TX_A, 0, [log(TX_B, 0)])];
      expect(validateRpcResult("eth_getBlockReceipts", ["0x10"], otherTx)?.problem).toBe(
        `eth_getBlockReceipts: the receipt of ${TX_A} holds a log of ${TX_B}`,
      );
    });
  });

  describe("eth_getTransactionReceipt", () => {
    test("error: the receipt of another transaction", () => {
      expect(validateRpcResult("eth_getTransactionReceipt", [TX_B], receipts()[0])).toEqual({
        problem: `eth_getTransactionReceipt asked for ${TX_B}, got the receipt of ${TX_A}`,
        block: 16n,
      });
    });

    test("error: duplicate log index inside one receipt", () => {
      const dup = receipt(TX_A, 0, [log(TX_A, 3), log(TX_A, 3)]);
      expect(validateRpcResult("eth_getTransactionReceipt", [TX_A], dup)?.problem).toBe(
        "eth_getTransactionReceipt returned log index 3 of block 16 twice",
      );
    });
  });

  describe("blocks and transactions", () => {
    test("error: a block of another number or hash", () => {
      expect(validateRpcResult("eth_getBlockByNumber", ["0xf", false], block([]))).toEqual({
        problem: "eth_getBlockByNumber asked for block 15, got block 16",
        block: 15n,
      });
      expect(validateRpcResult("eth_getBlockByHash", [OTHER_BLOCK, false], block([]))?.problem).toMatch(
        /^eth_getBlockByHash asked for block 0xcccc/,
      );
    });

    test("error: a transaction listed twice or of another block", () => {
      expect(validateRpcResult("eth_getBlockByNumber", ["0x10", false], block([TX_A, TX_A]))?.problem).toBe(
        `eth_getBlockByNumber lists transaction ${TX_A} twice in block 16`,
      );
      const stray = block([fullTx(TX_A), fullTx(TX_B, { blockHash: OTHER_BLOCK })]);
      expect(validateRpcResult("eth_getBlockByNumber", ["0x10", true], stray)?.problem).toBe(
        `eth_getBlockByNumber returned transaction ${TX_B} of another block`,
      );
    });

    test("error: eth_getTransactionByHash answering another transaction", () => {
      expect(validateRpcResult("eth_getTransactionByHash", [TX_B], fullTx(TX_A))?.problem).toBe(
        `eth_getTransactionByHash asked for ${TX_B}, got ${TX_A}`,
      );
    });

    test("behavior: a provider's long value is quoted cut short", () => {
      const flood = `0x${"f".repeat(10_000)}`;
      const problem = validateRpcResult("eth_getTransactionByHash", [TX_B], fullTx(flood))?.problem ?? "";
      expect(problem.length).toBeLessThan(200);
    });
  });
});
