import type { Hash } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RpcProxy, startRpcProxy } from "../../test/helpers/rpcProxy.ts";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import { type ChainClient, createChainClient } from "../chain/createChainClient.ts";
import { type Anvil, startAnvil } from "../demo/anvil.ts";
import { ReorgDetectedError } from "./errors.ts";
import { fetchTransactionsByHash } from "./fetchTransactionsByHash.ts";

// Receipts fetched one by one (webhooks, track-tx) are each consistent on their own, so the chain client
// accepts them; checked against each other and their block, they must still agree.

const SENDER = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
// Runtime `PUSH1 0 PUSH1 0 LOG0` twice, then STOP: every call emits two logs.
const TWO_LOGS_INITCODE = "0x6a60006000a060006000a000600052600b6015f3";

type Json = Record<string, unknown>;

let anvil: Anvil;
let proxy: RpcProxy;
let chain: ChainClient;
/** Two transactions of one block, each emitting two logs (block log indexes 0-1 and 2-3). */
let first: Hash;
let second: Hash;

beforeAll(async () => {
  anvil = await startAnvil();
  proxy = await startRpcProxy({ upstream: anvil.url });
  chain = createChainClient(testCommon(testConfig({ urls: [proxy.url] })), {
    baseDelayMs: 5,
    maxDelayMs: 20,
  });
  const deploy = await chain.request<Hash>("eth_sendTransaction", [
    { from: SENDER, data: TWO_LOGS_INITCODE },
  ]);
  const emitter = (await chain.client.waitForTransactionReceipt({ hash: deploy, pollingInterval: 20 }))
    .contractAddress;
  await chain.request("evm_setAutomine", [false]);
  first = await chain.request<Hash>("eth_sendTransaction", [{ from: SENDER, to: emitter }]);
  second = await chain.request<Hash>("eth_sendTransaction", [{ from: SENDER, to: emitter }]);
  await chain.request("evm_mine", []);
  await chain.request("evm_setAutomine", [true]);
});

afterAll(async () => {
  chain?.close();
  await proxy?.close();
  await anvil?.stop();
});

const isSecond = (params: unknown) => Array.isArray(params) && params[0] === second;

describe("fetchTransactionsByHash", () => {
  test("default: two transactions of one block, with their logs", async () => {
    const fetched = await fetchTransactionsByHash(chain, [first, second]);
    expect(fetched.pending).toEqual([]);
    expect(fetched.headers).toHaveLength(1);
    expect(
      fetched.transactions.map((t) => [t.hash, t.transactionIndex, t.logs.map((l) => l.logIndex)]),
    ).toEqual([
      [first, 0, [0, 1]],
      [second, 1, [2, 3]],
    ]);
  });

  test("error: receipts of one block repeating a log index", async () => {
    proxy.inject({
      kind: "rewrite",
      method: "eth_getTransactionReceipt",
      when: isSecond,
      times: 1,
      // each log of the second receipt given the index of the first receipt's logs
      rewrite: (receipt) => ({
        ...(receipt as Json),
        logs: ((receipt as Json).logs as Json[]).map((log, i) => ({
          ...log,
          logIndex: `0x${i.toString(16)}`,
        })),
      }),
    });
    const error = await fetchTransactionsByHash(chain, [first, second]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReorgDetectedError);
    expect((error as ReorgDetectedError).details).toBe("receipts of one block repeat a log index");
  });

  test("error: a receipt placing the transaction at another index than its block", async () => {
    proxy.inject({
      kind: "rewrite",
      method: "eth_getTransactionReceipt",
      when: isSecond,
      times: 1,
      rewrite: (receipt) => ({ ...(receipt as Json), transactionIndex: "0x5" }),
    });
    const error = await fetchTransactionsByHash(chain, [first, second]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReorgDetectedError);
    expect((error as ReorgDetectedError).details).toBe(
      `receipt ${second} (index 5) does not match ${second} (index 1)`,
    );
  });
});
