import type { ErrorTally } from "./errorTally.ts";
import type { SoakEndpoint, SoakPools } from "./soakEndpoints.ts";
import type { SoakWindows } from "./soakWindows.ts";

/** Requests in flight beyond which the server is declared to have fallen behind (a request is skipped). */
const MAX_IN_FLIGHT = 200;
/** A reader gives up after this long: an answer slower than this counts as an error (`http timeout`). */
const REQUEST_TIMEOUT_MS = 30_000;
const TICK_MS = 20;

export type ApiLoad = {
  /** stop issuing requests and wait for those in flight */
  stop(): Promise<void>;
  /** latencies (ms) per endpoint key per window; completed 200s only */
  latencies: Map<string, number[][]>;
  /** requests completed (any status) per window */
  completed: number[];
  /** requests due by the schedule */
  sent(): number;
  /** requests not sent because 200 were already in flight (the server fell behind: counts against throughput) */
  skipped(): number;
};

/**
 * Issue `rate` requests a second, open loop: every 20 ms the requests due since the start are sent without
 * waiting for earlier answers, so a slow server shows as latency (and, past 200 in flight, as skipped
 * requests, which count against the throughput), never as a quietly lower rate. Endpoints take turns by weight in a fixed
 * interleaved order. Each answer must be 200 with JSON that passes the endpoint's check; anything else is
 * counted in `errors` by kind.
 */
export function startApiLoad(options: {
  apiUrl: string;
  rate: number;
  endpoints: readonly SoakEndpoint[];
  pools: SoakPools;
  windows: SoakWindows;
  errors: ErrorTally;
}): ApiLoad {
  const { endpoints, windows, errors } = options;
  const schedule = interleave(endpoints);
  const latencies = new Map(
    endpoints.map((e) => [e.key, Array.from({ length: windows.count }, () => [] as number[])]),
  );
  const completed = new Array<number>(windows.count).fill(0);
  const inFlight = new Set<Promise<void>>();
  const start = performance.now();
  let issued = 0;
  let skipped = 0;
  let turn = 0;
  const counters = new Map<string, number>();

  const request = async (endpoint: SoakEndpoint, path: string) => {
    const begin = performance.now();
    try {
      const response = await fetch(`${options.apiUrl}${path}`, {
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      const end = performance.now();
      completed[windows.at(end)]!++;
      if (response.status !== 200) {
        errors.add(`http ${response.status}`, `${path}: ${text.slice(0, 200)}`);
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        errors.add("malformed response", `${path}: not JSON`);
        return;
      }
      const problem = endpoint.check?.(body, path) ?? null;
      if (problem !== null) {
        errors.add("malformed response", `${path}: ${problem}`);
        return;
      }
      latencies.get(endpoint.key)![windows.at(begin)]!.push(end - begin);
    } catch (error) {
      const name = (error as Error).name;
      errors.add(name === "TimeoutError" ? "http timeout" : "socket error", `${path}: ${String(error)}`);
    }
  };

  const tick = () => {
    const due = Math.floor(((performance.now() - start) / 1000) * options.rate);
    while (issued < due) {
      issued++;
      // Up to a full rotation of the schedule to find an endpoint with a URL (tx by hash needs indexed hashes).
      let endpoint: SoakEndpoint | undefined;
      let path: string | null = null;
      for (let k = 0; k < schedule.length && path === null; k++) {
        endpoint = schedule[turn++ % schedule.length]!;
        const n = counters.get(endpoint.key) ?? 0;
        counters.set(endpoint.key, n + 1);
        path = endpoint.next(options.pools, n);
      }
      if (endpoint === undefined || path === null) continue;
      if (inFlight.size >= MAX_IN_FLIGHT) {
        skipped++;
        continue;
      }
      const p = request(endpoint, path).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  };
  const timer = setInterval(tick, TICK_MS);
  return {
    latencies,
    completed,
    sent: () => issued,
    skipped: () => skipped,
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}

/** Endpoints in a fixed order that spreads each one's turns evenly: `weight` turns out of every 100. */
function interleave(endpoints: readonly SoakEndpoint[]): SoakEndpoint[] {
  const slots: { endpoint: SoakEndpoint; at: number }[] = [];
  for (const endpoint of endpoints) {
    for (let k = 0; k < endpoint.weight; k++) slots.push({ endpoint, at: (k + 0.5) / endpoint.weight });
  }
  return slots.sort((a, b) => a.at - b.at).map((s) => s.endpoint);
}
