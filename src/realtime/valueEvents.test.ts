import { describe, expect, test } from "vitest";
import { ROUTER } from "../decode/_test/testRegistry.ts";
import { createLocalBroadcaster, type IngestEvent } from "../ingest/broadcaster.ts";
import { createSilentLogger } from "../internal/logger.ts";
import type { TransactionToValue, TransactionValue } from "../prices/transactionValues.ts";
import { swapTransaction } from "./_test/fixtures.ts";
import type { HubEvent, PreparedEvent } from "./createHub.ts";
import { valueEvents } from "./valueEvents.ts";

/** valueEvents over the in-process broadcaster; `valued` records every transaction the valuer was asked for. */
function setUp() {
  const broadcaster = createLocalBroadcaster();
  const valued: string[] = [];
  const source = valueEvents(broadcaster, {
    transactionJson: (tx, _logs, _transfers, value) => ({ hash: tx.hash, valueUsd: value?.valueUsd ?? null }),
    value: async (txs: readonly TransactionToValue[]) => {
      valued.push(...txs.map((t) => t.tx.hash));
      return new Map<string, TransactionValue>(
        txs.map((t) => [t.tx.hash, { valueUsd: 12.5, transfers: new Map<number, number | null>() }]),
      );
    },
    logger: createSilentLogger(),
  });
  return { broadcaster, source, valued };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("valueEvents", () => {
  const tx = swapTransaction();
  const event = { type: "transaction", transaction: tx, source: "poll" } as const;

  test("behavior: a transaction no listener wants is neither valued nor sent", async () => {
    const { broadcaster, source, valued } = setUp();
    const received: HubEvent[] = [];
    const asked: (readonly string[])[] = [];
    source.subscribe(
      (e) => received.push(e),
      (topics) => {
        asked.push(topics);
        return false;
      },
    );
    broadcaster.publish([event]);
    await tick();
    expect(valued).toEqual([]);
    expect(received).toEqual([]);
    // It was asked with the event's topics (SPEC §5), the protocol's and the router's among them.
    expect(asked).toHaveLength(1);
    expect(asked[0]).toEqual(
      expect.arrayContaining(["transactions", `protocol:${tx.protocol}`, `address:${ROUTER.toLowerCase()}`]),
    );
  });

  test("behavior: one wanted topic is enough: valued and sent with its value; a removal always passes", async () => {
    const { broadcaster, source, valued } = setUp();
    const received: HubEvent[] = [];
    source.subscribe(
      (e) => received.push(e),
      (topics) => topics.includes(`address:${ROUTER.toLowerCase()}`),
    );
    const removed: IngestEvent = {
      type: "removed",
      removed: {
        hash: tx.hash,
        blockNumber: 7,
        blockHash: tx.blockHash,
        protocol: tx.protocol,
        source: "poll",
        parties: [],
        tokens: [],
      },
    };
    broadcaster.publish([event, removed]);
    await tick();
    await tick();
    expect(valued).toEqual([tx.hash]);
    expect(received).toHaveLength(2);
    const prepared = received[0] as PreparedEvent;
    expect(prepared.prepared).toBe(true);
    expect(JSON.parse(prepared.data)).toEqual({ hash: tx.hash, valueUsd: 12.5 });
    expect(received[1]).toBe(removed);
  });

  test("default: a listener without `wanted` gets every transaction, valued", async () => {
    const { broadcaster, source, valued } = setUp();
    const received: HubEvent[] = [];
    source.subscribe((e) => received.push(e));
    broadcaster.publish([event]);
    await tick();
    await tick();
    expect(valued).toEqual([tx.hash]);
    expect(received).toHaveLength(1);
  });
});
