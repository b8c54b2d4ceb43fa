import { encodeAbiParameters, encodeEventTopics, encodeFunctionData, erc20Abi, pad, parseAbi } from "viem";
import { describe, expect, test } from "vitest";
import {
  DEMO,
  ROUTER,
  routerAbi,
  SHARED,
  testRegistry,
  USDC,
  VAULT,
  vaultAbi,
} from "./_test/testRegistry.ts";
import { actionType } from "./actionType.ts";
import { attributeProtocol } from "./attributeProtocol.ts";
import { type ChainTransaction, decodeTransaction } from "./decodeTransaction.ts";
import { decodeTransfer, TRANSFER_TOPIC } from "./decodeTransfer.ts";

const ALICE = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";
const BOB = "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359";

function tx(overrides: Partial<ChainTransaction>): ChainTransaction {
  return {
    hash: `0x${"ab".repeat(32)}`,
    blockNumber: 7,
    blockHash: `0x${"cd".repeat(32)}`,
    transactionIndex: 0,
    blockTimestamp: new Date("2026-11-21T08:00:00.000Z"),
    from: ALICE,
    to: ROUTER,
    input: "0x",
    value: 0n,
    gasUsed: 21000n,
    nonce: 0,
    gas: 21000n,
    cumulativeGasUsed: 21000n,
    effectiveGasPrice: 1n,
    status: true,
    contractAddress: null,
    logs: [],
    ...overrides,
  };
}

function transferLog(logIndex: number, token: `0x${string}`, from: string, to: string, amount: bigint) {
  return {
    logIndex,
    address: token,
    topics: [TRANSFER_TOPIC, pad(from as `0x${string}`), pad(to as `0x${string}`)] as `0x${string}`[],
    data: encodeAbiParameters([{ type: "uint256" }], [amount]),
  };
}

describe("decodeTransaction", () => {
  const registry = testRegistry();

  test("default: router swap with transfers", () => {
    const input = encodeFunctionData({
      abi: routerAbi,
      functionName: "swapExactTokensForTokens",
      args: [10n ** 18n, 5n, [DEMO, USDC], BOB, 123n],
    });
    const decoded = decodeTransaction(
      registry,
      tx({
        input,
        logs: [
          transferLog(0, DEMO, ALICE, ROUTER, 10n ** 18n),
          transferLog(1, USDC, ROUTER, BOB, 2_000_000n),
        ],
      }),
    );
    expect(decoded).not.toBeNull();
    expect(decoded?.protocol).toBe("demoswap");
    expect(decoded?.actionType).toBe("swap");
    expect(decoded?.functionName).toBe("swapExactTokensForTokens");
    expect(decoded?.functionArgs).toEqual({
      amountIn: "1000000000000000000",
      amountOutMin: "5",
      path: ["0x2000000000000000000000000000000000000001", "0x2000000000000000000000000000000000000002"],
      to: "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
      deadline: "123",
    });
    expect(decoded?.transfers).toEqual([
      { logIndex: 0, token: DEMO, from: ALICE, to: ROUTER, amount: 10n ** 18n },
      { logIndex: 1, token: USDC, from: ROUTER, to: BOB, amount: 2_000_000n },
    ]);
    expect(decoded?.logs[0]).toMatchObject({
      eventName: "Transfer",
      eventArgs: { from: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", value: "1000000000000000000" },
    });
  });

  test("behavior: actions override from config", () => {
    const input = encodeFunctionData({
      abi: routerAbi,
      functionName: "addLiquidity",
      args: [DEMO, USDC, 1n, 2n, 0n, 0n, ALICE, 9n],
    });
    expect(decodeTransaction(registry, tx({ input }))?.actionType).toBe("provide");
  });

  test("behavior: undecodable input keeps the selector", () => {
    const decoded = decodeTransaction(registry, tx({ to: VAULT, input: "0xdeadbeef0000" }));
    expect(decoded).toMatchObject({
      protocol: "demovault",
      functionName: "0xdeadbeef",
      actionType: "unknown",
      functionArgs: {},
    });
  });

  test("behavior: plain native transfer to a configured contract", () => {
    expect(decodeTransaction(registry, tx({ to: VAULT, value: 5n }))).toMatchObject({
      actionType: "nativeTransfer",
      functionName: "transfer",
    });
  });

  test("behavior: irrelevant transaction is null", () => {
    const other = "0x9999999999999999999999999999999999999999";
    expect(
      decodeTransaction(registry, tx({ to: other, logs: [transferLog(0, other, ALICE, BOB, 1n)] })),
    ).toBeNull();
  });

  test("behavior: attributed through the first relevant log when `to` is unknown", () => {
    const other = "0x9999999999999999999999999999999999999999";
    const decoded = decodeTransaction(
      registry,
      tx({
        to: other,
        input: "0x12345678",
        logs: [transferLog(0, other, ALICE, BOB, 1n), transferLog(1, USDC, ALICE, BOB, 3n)],
      }),
    );
    expect(decoded?.protocol).toBe("demovault");
    expect(decoded?.actionType).toBe("unknown");
    expect(decoded?.transfers).toHaveLength(1);
  });

  test("behavior: vault event decoded with its own ABI", () => {
    const topics = encodeEventTopics({
      abi: vaultAbi,
      eventName: "Deposited",
      args: { user: ALICE },
    }) as `0x${string}`[];
    const decoded = decodeTransaction(
      registry,
      tx({
        to: VAULT,
        input: encodeFunctionData({ abi: vaultAbi, functionName: "deposit", args: [42n] }),
        logs: [
          { logIndex: 3, address: VAULT, topics, data: encodeAbiParameters([{ type: "uint256" }], [42n]) },
        ],
      }),
    );
    expect(decoded?.actionType).toBe("deposit");
    expect(decoded?.functionArgs).toEqual({ amount: "42" });
    expect(decoded?.logs[0]).toMatchObject({
      eventName: "Deposited",
      eventArgs: { user: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", amount: "42" },
    });
  });
});

describe("attributeProtocol", () => {
  const registry = testRegistry();

  test("args: hint of a touched protocol wins", () => {
    expect(attributeProtocol(registry, SHARED, [DEMO], "demoswap")).toBe("demoswap");
  });

  test("args: hint of an untouched protocol is ignored", () => {
    expect(attributeProtocol(registry, ROUTER, [], "demovault")).toBe("demoswap");
    expect(attributeProtocol(registry, null, [], "demovault")).toBeUndefined();
  });
});

describe("decodeTransfer", () => {
  test("behavior: ERC-721 Transfer (4 topics) is not an ERC-20 transfer", () => {
    const topics = encodeEventTopics({
      abi: parseAbi(["event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)"]),
      eventName: "Transfer",
      args: { from: ALICE, to: BOB, tokenId: 1n },
    });
    expect(decodeTransfer(topics as `0x${string}`[], "0x")).toBeNull();
  });

  test("default: ERC-20 transfer", () => {
    const topics = encodeEventTopics({
      abi: erc20Abi,
      eventName: "Transfer",
      args: { from: ALICE, to: BOB },
    });
    expect(
      decodeTransfer(
        topics as `0x${string}`[],
        encodeAbiParameters([{ type: "uint256" }], [2n ** 256n - 1n]),
      ),
    ).toEqual({
      from: ALICE,
      to: BOB,
      amount: 2n ** 256n - 1n,
    });
  });
});

describe("actionType", () => {
  test.each([
    ["transferFrom", "transfer"],
    ["approve", "approve"],
    ["swapExactETHForTokens", "swap"],
    ["removeLiquidityETH", "removeLiquidity"],
    ["unstake", "unstake"],
    ["stake", "stake"],
    ["deposit", "deposit"],
    ["withdraw", "withdraw"],
    ["getReward", "claim"],
    ["mint", "mint"],
    ["burnFrom", "burn"],
    ["setFee", "contractCall"],
  ])("%s -> %s", (name, expected) => {
    expect(actionType(name, {}, false)).toBe(expected);
  });
});
