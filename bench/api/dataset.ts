import type { Hex } from "viem";
import type { Address } from "../../src/config/schema.ts";
import type { IndexedLog, IndexedTransaction, IndexedTransfer } from "../../src/decode/decodeTransaction.ts";
import type { BlockRow } from "../../src/store/commitBatch.ts";
import { mulberry32 } from "../../test/helpers/faultsRandom.ts";
import { BENCH_TOKENS, benchAddress, BENCH_CONTRACTS as C } from "./apiBenchConfig.ts";
import {
  benchBlockHash,
  cs,
  depositedLog,
  fakeHash,
  swapLog,
  syncLog,
  transferRecords,
  ZERO,
} from "./chainRecords.ts";
import { createExpectations, type Expectations } from "./expectations.ts";

export type DatasetOptions = {
  /** transactions to generate; every one carries exactly two tracked-token transfers, plus two of XPT */
  transactions: number;
  /** holders of DEMO at the end (users, the DEMO/USDC pair and the vault) */
  holders: number;
  /** transactions per block (default 10) */
  perBlock?: number;
  /** seconds between blocks (default 60: 100,000 transactions span about a week) */
  blockSeconds?: number;
  /** the newest block's time (default now): the trailing 24 hours hold the newest blocks */
  endTime?: Date;
  /** blocks per committed batch (default 500: 5,000 transactions) */
  batchBlocks?: number;
};

export type DatasetBatch = { transactions: IndexedTransaction[]; blocks: BlockRow[]; lastBlock: number };

export type Dataset = {
  firstBlock: number;
  lastBlock: number;
  /** the user addresses (everyone but the contracts and the deployer) */
  users: readonly Address[];
  /** every batch in block order; `expectations` is complete once they have all been produced */
  batches(): Generator<DatasetBatch>;
  expectations: Expectations;
};

export const FIRST_BLOCK = 1_000_000;
const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const DEMO = BENCH_TOKENS.DEMO.address;
const USDC = BENCH_TOKENS.USDC.address;
const WETH = BENCH_TOKENS.WETH.address;
const RWD = BENCH_TOKENS.RWD.address;
const XPT = BENCH_TOKENS.XPT.address;
const DEPLOYER = benchAddress("deployer");

type Call = {
  from: Address;
  to: Address;
  protocol: string;
  actionType: string;
  functionName: string;
  functionArgs: Record<string, unknown>;
  logs: IndexedLog[];
  transfers: IndexedTransfer[];
};

/**
 * A demo-like history, deterministic: two pool seedings, mints of DEMO to `holders - 2` users (two per
 * transaction), then activity by users picked with a skew (a few are very active, as on a real chain):
 * DEMO->USDC swaps on the Router, USDC->WETH swaps, vault deposits that mint RWD, and Disperse payouts of DEMO
 * to two other users. Amounts are a fraction of the sender's balance, so no DEMO holder ever drops to zero:
 * DEMO ends with exactly `holders` holders. Balances, counters and totals are tracked on the side
 * (`expectations`) to check what the database's triggers maintained.
 */
export function createDataset(options: DatasetOptions): Dataset {
  const perBlock = options.perBlock ?? 10;
  const blockSeconds = options.blockSeconds ?? 60;
  const batchBlocks = options.batchBlocks ?? 500;
  const users = options.holders - 2;
  const mintTransactions = Math.ceil(users / 2);
  if (users < 4 || options.transactions < 2 + mintTransactions + 1) {
    throw new Error(
      `${options.transactions} transactions cannot make ${options.holders} holders (2 per mint)`,
    );
  }
  const lastBlock = FIRST_BLOCK + Math.ceil(options.transactions / perBlock) - 1;
  const endMs = (options.endTime ?? new Date()).getTime();
  const userAddresses = Array.from({ length: users }, (_, i) => benchAddress(`user ${i}`));
  const expectations = createExpectations();
  // Seeded, so that every run seeds the same data.
  const rand = mulberry32(4242);
  const balance = expectations.balance;
  const pairReserves = (pair: Address, token0: Address, token1: Address): [bigint, bigint] => {
    const [a, b] = token0 < token1 ? [token0, token1] : [token1, token0];
    return [balance(a, pair), balance(b, pair)];
  };

  const transfer = (call: Call, token: Address, from: Address, to: Address, amount: bigint) => {
    const records = transferRecords(call.logs.length, token, from, to, amount);
    call.logs.push(records.log);
    call.transfers.push(records.transfer);
    expectations.move(token, from, to, amount);
  };

  const call = (
    from: Address,
    to: Address,
    protocol: string,
    action: string,
    fn: string,
    args: object,
  ): Call => ({
    from,
    to,
    protocol,
    actionType: action,
    functionName: fn,
    functionArgs: args as Record<string, unknown>,
    logs: [],
    transfers: [],
  });

  const mint = (to: Address, mints: readonly [Address, Address, bigint][]): Call => {
    const c = call(DEPLOYER, to, "demoswap", "mint", "mint", {});
    for (const [token, holder, amount] of mints) transfer(c, token, ZERO, holder, amount);
    c.functionArgs = { to: cs(mints[0]![1]), amount: mints[0]![2].toString() };
    return c;
  };

  const swap = (
    user: Address,
    pair: Address,
    tokenIn: Address,
    tokenOut: Address,
    amountIn: bigint,
    out: bigint,
  ) => {
    const path = [cs(tokenIn), cs(tokenOut)];
    const deadline = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
    const c = call(user, C.router, "demoswap", "swap", "swapExactTokensForTokens", {
      amountIn: amountIn.toString(),
      amountOutMin: "0",
      path,
      to: cs(user),
      deadline,
    });
    transfer(c, tokenIn, user, pair, amountIn);
    transfer(c, tokenOut, pair, user, out);
    const [r0, r1] = pairReserves(pair, tokenIn, tokenOut);
    c.logs.push(syncLog(c.logs.length, pair, r0, r1));
    const inIs0 = tokenIn < tokenOut;
    const amounts = inIs0 ? ([amountIn, 0n, 0n, out] as const) : ([0n, amountIn, out, 0n] as const);
    c.logs.push(swapLog(c.logs.length, pair, C.router, user, amounts));
    return c;
  };

  const activity = (): Call => {
    const user = userAddresses[Math.floor(users * rand() ** 2)]!;
    const demo = balance(DEMO, user);
    const kind = rand();
    if (kind >= 0.45 && kind < 0.55 && balance(USDC, user) >= 4n) {
      const amountIn = balance(USDC, user) / 4n;
      return swap(user, C.pairWethUsdc, USDC, WETH, amountIn, (amountIn * 10n ** 12n) / 3000n);
    }
    if (kind >= 0.55 && kind < 0.75) {
      const amount = demo / 16n;
      const c = call(user, C.vault, "demovault", "deposit", "deposit", { amount: amount.toString() });
      transfer(c, DEMO, user, C.vault, amount);
      transfer(c, RWD, ZERO, user, amount / 10n);
      c.logs.push(depositedLog(c.logs.length, C.vault, user, amount));
      return c;
    }
    if (kind >= 0.75) {
      const recipients = [0, 1].map(() => userAddresses[Math.floor(users * rand())]!);
      const amount = demo / 16n;
      const c = call(user, C.disperse, "demovault", "disperse", "disperseToken", {
        token: cs(DEMO),
        recipients: recipients.map(cs),
        values: [amount.toString(), amount.toString()],
      });
      for (const r of recipients) transfer(c, DEMO, user, r, amount);
      return c;
    }
    const amountIn = demo / 16n;
    return swap(user, C.pairDemoUsdc, DEMO, USDC, amountIn, (amountIn * 2n) / 10n ** 12n);
  };

  const callAt = (i: number): Call => {
    if (i === 0)
      return mint(DEMO, [
        [DEMO, C.pairDemoUsdc, 10_000_000n * E18],
        [USDC, C.pairDemoUsdc, 2_000_000_000n * E6],
      ]);
    if (i === 1)
      return mint(WETH, [
        [WETH, C.pairWethUsdc, 1_000_000n * E18],
        [USDC, C.pairWethUsdc, 30_000_000n * E6],
      ]);
    if (i < 2 + mintTransactions) {
      const k = (i - 2) * 2;
      const amount = () => BigInt(100 + Math.floor(rand() * 9900)) * E18 + BigInt(Math.floor(rand() * 1e9));
      return mint(DEMO, [
        [DEMO, userAddresses[k]!, amount()],
        [DEMO, userAddresses[(k + 1) % users]!, amount()],
      ]);
    }
    return activity();
  };

  const blockTime = (n: number) => new Date(endMs - (lastBlock - n) * blockSeconds * 1000);

  function* batches(): Generator<DatasetBatch> {
    for (let from = FIRST_BLOCK; from <= lastBlock; from += batchBlocks) {
      const to = Math.min(lastBlock, from + batchBlocks - 1);
      const blocks: BlockRow[] = [];
      const transactions: IndexedTransaction[] = [];
      for (let n = from; n <= to; n++) {
        const timestamp = blockTime(n);
        blocks.push({ number: n, hash: benchBlockHash(n), parentHash: benchBlockHash(n - 1), timestamp });
        for (let index = 0; index < perBlock; index++) {
          const i = (n - FIRST_BLOCK) * perBlock + index;
          if (i >= options.transactions) break;
          const c = callAt(i);
          // Two XPT transfers per transaction (a mint to the sender, half of it on to a user): XPT has
          // exactly twice as many transfers as there are transactions, 200,000 for the CSV export's
          // measurement, without touching the random draws that shape everything else.
          transfer(c, XPT, ZERO, c.from, 2n * E18);
          transfer(c, XPT, c.from, userAddresses[(i * 7919) % users]!, E18);
          const tx: IndexedTransaction = {
            hash: fakeHash(`tx ${i}`),
            blockNumber: n,
            blockHash: benchBlockHash(n),
            transactionIndex: index,
            blockTimestamp: timestamp,
            from: c.from,
            to: c.to,
            // A call's data as large as a typical one (a selector and four words), for the storage it takes.
            input:
              `${fakeHash(c.functionName).slice(0, 10)}${fakeHash(`input ${i}`).slice(2).repeat(4)}` as Hex,
            nonce: i,
            gas: 250_000n,
            value: 0n,
            gasUsed: BigInt(90_000 + Math.floor(rand() * 110_000)),
            cumulativeGasUsed: BigInt(200_000 * (index + 1)),
            effectiveGasPrice: BigInt(1 + Math.floor(rand() * 30)) * 10n ** 9n,
            status: true,
            contractAddress: null,
            protocol: c.protocol,
            actionType: c.actionType,
            functionName: c.functionName,
            functionArgs: c.functionArgs,
            logs: c.logs,
            transfers: c.transfers,
          };
          expectations.addTransaction(tx);
          transactions.push(tx);
        }
      }
      yield { transactions, blocks, lastBlock: to };
    }
  }

  return { firstBlock: FIRST_BLOCK, lastBlock, users: userAddresses, batches, expectations };
}
