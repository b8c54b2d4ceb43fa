import { encodeFunctionData, type Hex, maxUint256, parseAbi, parseEther, parseUnits, toHex } from "viem";
import type { Address } from "../../src/config/schema.ts";
import type { DemoDeployment } from "../../src/demo/deploy.ts";
import { NonRetryableError } from "../../src/internal/errors.ts";
import { alchemyHeaders } from "../../src/webhooks/_test/fixtures.ts";
import type { BenchChain } from "../_shared/benchChain.ts";
import { BENCH_ALCHEMY_KEY } from "../_shared/startBenchProtoscan.ts";
import { disperseActivity } from "../realtime/measureFreshness.ts";
import type { ErrorTally } from "./errorTally.ts";

export type WebhookStats = {
  /** deliveries answered 200, duplicates included */
  delivered: number;
  /** of which a resend of the same delivery id (answered 200, not processed again) */
  resent: number;
  /** of which a second delivery (new id) of a transaction already delivered */
  redelivered: number;
  /** transactions delivered */
  transactions: number;
  /** attempts repeated after a 5xx, a timeout or a dropped connection, as a provider retries */
  retries: number;
};

export type WebhookDeliveries = {
  stats: WebhookStats;
  /** stop after the delivery in progress */
  stop(): Promise<void>;
};

/**
 * Every `everyMs`, mine a Disperse call of WETH (a shared contract and an untracked-by-scan token: only a
 * webhook brings it in) and POST a signed Alchemy `ADDRESS_ACTIVITY` delivery of it, shaped as
 * test/e2e/webhooks.test.ts builds them. Every third delivery is sent twice with the same delivery id (a
 * provider retry) and every fifth transaction is delivered again under a new id (two webhooks watching the
 * same address): each must be answered 200. `expect(hash)` is told about every delivered transaction, so the
 * caller can check it is broadcast exactly once.
 */
export function startWebhookDeliveries(options: {
  chain: BenchChain;
  apiUrl: string;
  everyMs: number;
  errors: ErrorTally;
  expect: (hash: Hex) => void;
}): WebhookDeliveries {
  const { chain, errors } = options;
  const stats: WebhookStats = { delivered: 0, resent: 0, redelivered: 0, transactions: 0, retries: 0 };
  let stopped = false;
  let wake: (() => void) | undefined;

  /**
   * POST a delivery as a provider does: a 5xx, a timeout or a dropped connection is retried with the same
   * body (1, 2, 4, 8 s apart; Alchemy and QuickNode retry unacknowledged deliveries); a 4xx is not.
   */
  const post = async (body: string, what: string) => {
    for (let attempt = 1; ; attempt++) {
      let failure: string;
      try {
        const response = await fetch(`${options.apiUrl}/api/webhooks/alchemy`, {
          method: "POST",
          headers: alchemyHeaders(body, BENCH_ALCHEMY_KEY),
          body,
          signal: AbortSignal.timeout(30_000),
        });
        const text = await response.text();
        if (response.status === 200) {
          stats.delivered++;
          return;
        }
        if (response.status < 500) {
          errors.add(`webhook http ${response.status}`, `${what}: ${text.slice(0, 200)}`);
          return;
        }
        failure = `answered ${response.status}: ${text.slice(0, 200)}`;
      } catch (error) {
        failure = String(error);
      }
      if (attempt === 5 || stopped) {
        errors.add("webhook not acknowledged", `${what}, ${attempt} attempts: ${failure}`);
        return;
      }
      stats.retries++;
      await new Promise((resolve) => setTimeout(resolve, 1000 * 2 ** (attempt - 1)));
    }
  };

  const loop = async () => {
    let sender: Hex;
    try {
      sender = await fundSender(chain);
    } catch (error) {
      errors.add("bench chain error", `funding the webhook sender: ${String(error)}`);
      return;
    }
    for (let i = 0; !stopped; i++) {
      const started = performance.now();
      try {
        const hash = await chain.send(disperseFrom(chain.deployment, sender, i));
        const { blockNumber } = await chain.waitForReceipt(hash, { pollMs: 100, timeoutMs: 60_000 });
        const body = JSON.stringify(disperseActivity(chain.deployment, hash, blockNumber, i, sender));
        options.expect(hash);
        stats.transactions++;
        await post(body, `delivery ${i}`);
        if (i % 3 === 0) {
          await post(body, `delivery ${i}, resent`);
          stats.resent++;
        }
        if (i % 5 === 0) {
          await post(
            JSON.stringify(disperseActivity(chain.deployment, hash, blockNumber, i, sender)),
            `delivery ${i}, new id`,
          );
          stats.redelivered++;
        }
      } catch (error) {
        // The chain side (anvil) failed, not protoscan: still an error of the run, named as such.
        if (!stopped) errors.add("bench chain error", String(error));
      }
      const rest = options.everyMs - (performance.now() - started);
      if (rest > 0 && !stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, rest);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  };
  const running = loop();
  return {
    stats,
    async stop() {
      stopped = true;
      wake?.();
      await running;
    },
  };
}

/** Anvil's dev account 9: unlocked and funded with ether, and not one of the demo users the activity sends from. */
const SENDER_ACCOUNT = 9;
const wethAbi = parseAbi(["function deposit() payable", "function approve(address, uint256) returns (bool)"]);

/**
 * A sender of its own for the webhook transactions: two senders letting anvil pick the nonce of the same
 * account at the same moment can get the same one, and one transaction silently replaces the other. Account
 * 9 wraps 10 ether and approves Disperse, waiting for each to be mined.
 */
async function fundSender(chain: BenchChain): Promise<Hex> {
  const accounts = (await chain.rpc("eth_accounts")) as Hex[];
  const sender = accounts[SENDER_ACCOUNT];
  if (sender === undefined) throw new NonRetryableError(`anvil has no dev account ${SENDER_ACCOUNT}`);
  const weth = chain.deployment.tokens.WETH.address;
  const wrap = await chain.rpc("eth_sendTransaction", [
    {
      from: sender,
      to: weth,
      value: toHex(parseEther("10")),
      data: encodeFunctionData({ abi: wethAbi, functionName: "deposit" }),
      gas: toHex(100_000n),
    },
  ]);
  await chain.waitForReceipt(wrap as Hex, { pollMs: 100 });
  const approve = await chain.send({
    from: sender as Address,
    to: weth,
    gas: 100_000n,
    data: encodeFunctionData({
      abi: wethAbi,
      functionName: "approve",
      args: [chain.deployment.contracts.disperse, maxUint256],
    }),
  });
  await chain.waitForReceipt(approve, { pollMs: 100 });
  return sender;
}

/** `Disperse.disperseToken(WETH, [user], [0.001 WETH])` from `sender` to the `i + 1`-th demo user (as `disperseActivity` says). */
function disperseFrom(d: DemoDeployment, sender: Hex, i: number) {
  const to = d.users[(i + 1) % d.users.length]!;
  const data = encodeFunctionData({
    abi: d.abis.disperse,
    functionName: "disperseToken",
    args: [d.tokens.WETH.address, [to], [parseUnits("0.001", 18)]],
  });
  return { from: sender as Address, to: d.contracts.disperse, data, gas: 150_000n };
}
