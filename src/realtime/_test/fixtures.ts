/** Decoded transactions for the realtime unit tests (the test registry of src/decode). */
import { encodeAbiParameters, encodeFunctionData, pad } from "viem";
import { DEMO, ROUTER, routerAbi, testRegistry, USDC } from "../../decode/_test/testRegistry.ts";
import {
  type ChainTransaction,
  decodeTransaction,
  type IndexedTransaction,
} from "../../decode/decodeTransaction.ts";
import { TRANSFER_TOPIC } from "../../decode/decodeTransfer.ts";

export const ALICE = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";
export const BOB = "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359";
export const ZERO = "0x0000000000000000000000000000000000000000";

export function transferLog(
  logIndex: number,
  token: `0x${string}`,
  from: string,
  to: string,
  amount: bigint,
) {
  return {
    logIndex,
    address: token,
    topics: [TRANSFER_TOPIC, pad(from as `0x${string}`), pad(to as `0x${string}`)] as `0x${string}`[],
    data: encodeAbiParameters([{ type: "uint256" }], [amount]),
  };
}

/** A decoded transaction, as the ingest pipeline broadcasts it. */
export function swapTransaction(overrides: Partial<ChainTransaction> = {}): IndexedTransaction {
  const chainTx: ChainTransaction = {
    hash: `0x${"ab".repeat(32)}`,
    blockNumber: 7,
    blockHash: `0x${"cd".repeat(32)}`,
    transactionIndex: 0,
    blockTimestamp: new Date("2026-11-21T08:00:00.000Z"),
    from: ALICE,
    to: ROUTER,
    input: encodeFunctionData({
      abi: routerAbi,
      functionName: "swapExactTokensForTokens",
      args: [10n ** 18n, 5n, [DEMO, USDC], BOB, 123n],
    }),
    value: 0n,
    gasUsed: 21000n,
    effectiveGasPrice: 1n,
    nonce: 0,
    gas: 21000n,
    cumulativeGasUsed: 21000n,
    status: true,
    contractAddress: null,
    logs: [transferLog(0, DEMO, ALICE, ROUTER, 10n ** 18n), transferLog(1, USDC, ROUTER, BOB, 2_000_000n)],
    ...overrides,
  };
  const decoded = decodeTransaction(testRegistry(), chainTx);
  if (!decoded) throw new Error("test transaction must be relevant");
  return decoded;
}
