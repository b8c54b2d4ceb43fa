import type { FanoutClientsResult } from "./fanoutClients.ts";
import { type LatencySummary, summarizeLatencies } from "./latencyStats.ts";

/** The fan-out figures of one run (docs/performance.md "Real-time benchmark" defines them). */
export type FanoutLatency = {
  /** per (event, client): arrival - the event's first arrival at any client */
  spread: LatencySummary;
  /** per (event, client): arrival - the first arrival of any event of the same block at any client */
  burst: LatencySummary;
  /** events measured, clients, (event, client) deliveries seen and expected */
  events: number;
  clients: number;
  delivered: number;
  expected: number;
  /** (event, client) deliveries seen, per block in the order given */
  deliveredPerBlock: number[];
};

/**
 * Merge the arrival times the client processes noted and measure the fan-out of each of `blocks`' events
 * (transaction hashes grouped by the block that mined them; events of other blocks are ignored):
 *
 * - `spread`: how long after the first client got an event each other client got it. The hub sends an event
 *   to every subscriber in one synchronous loop, so the first arrival stands for the moment the server began
 *   sending it; the spread is the cost of reaching the 1,000th client (server writes, kernel, client CPU).
 * - `burst`: the same from the first arrival of anything of the event's block, so that it also counts the
 *   events queued before it: the polling indexer commits a whole block (50 transactions) at once.
 */
export function fanoutLatency(
  results: readonly FanoutClientsResult[],
  blocks: readonly (readonly string[])[],
): FanoutLatency {
  const clients = results.reduce((n, r) => n + r.clients, 0);
  const spread: number[] = [];
  const burst: number[] = [];
  let events = 0;
  let delivered = 0;
  const deliveredPerBlock: number[] = [];
  for (const hashes of blocks) {
    const before = delivered;
    const perEvent = hashes.map((hash) => arrivalsOf(results, hash.toLowerCase()));
    let blockFirst = Number.POSITIVE_INFINITY;
    for (const times of perEvent) for (const t of times) if (t < blockFirst) blockFirst = t;
    for (const times of perEvent) {
      events++;
      delivered += times.length;
      let first = Number.POSITIVE_INFINITY;
      for (const t of times) if (t < first) first = t;
      for (const t of times) {
        spread.push(t - first);
        burst.push(t - blockFirst);
      }
    }
    deliveredPerBlock.push(delivered - before);
  }
  return {
    spread: summarizeLatencies(spread),
    burst: summarizeLatencies(burst),
    events,
    clients,
    delivered,
    expected: events * clients,
    deliveredPerBlock,
  };
}

/** Every client's arrival time of `hash`, over all client processes (missing arrivals left out). */
function arrivalsOf(results: readonly FanoutClientsResult[], hash: string): number[] {
  const times: number[] = [];
  for (const result of results) {
    for (const t of result.arrivals[hash] ?? []) if (t !== null) times.push(t);
  }
  return times;
}
