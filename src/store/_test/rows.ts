import type { logs, transactions } from "../schema.ts";

/** A `transactions` row setting every column but `storedAt`, with values at the edges of their types. */
export function transactionRow(
  hash: string,
  overrides: Partial<typeof transactions.$inferInsert> = {},
): typeof transactions.$inferInsert {
  return {
    hash,
    blockNumber: 2 ** 40,
    blockHash: `0x${"cd".repeat(32)}`,
    transactionIndex: 3,
    blockTimestamp: new Date("2026-11-21T08:00:00.123Z"),
    fromAddress: "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
    toAddress: null,
    contractAddress: null,
    valueWei: 2n ** 256n - 1n,
    gasUsed: 21_000n,
    gasPrice: 0n,
    status: false,
    protocol: "demoswap",
    actionType: "swap",
    functionName: "swap",
    functionArgs: {
      note: 'a "quoted" \\ value, {braces}, and ünïcode',
      list: ["1", "2"],
      nested: { a: null },
    },
    nonce: 2 ** 40 + 1,
    gasLimit: 2n ** 64n - 1n,
    input: `0xa9059cbb${"00".repeat(64)}`,
    cumulativeGasUsed: 30_000_000n,
    methodId: "0xa9059cbb",
    source: "poll",
    ...overrides,
  };
}

/** Two `logs` rows of `hash`: a decoded one with `topics` and `data` as given, and an undecoded one. */
export function logRows(
  hash: string,
  decoded: { topics: string[]; data: string; eventArgs: Record<string, unknown> } = {
    topics: [`0x${"11".repeat(32)}`, `0x${"22".repeat(32)}`],
    data: "0x",
    eventArgs: { value: "1" },
  },
): (typeof logs.$inferInsert)[] {
  const common = { txHash: hash, blockNumber: 1, transactionIndex: 0 };
  const address = "0x2000000000000000000000000000000000000001";
  return [
    { ...common, logIndex: 0, address, ...decoded, eventName: "Transfer" },
    { ...common, logIndex: 1, address, topics: [], data: "0x01", eventName: null, eventArgs: null },
  ];
}
