/**
 * The load generator of `npm run bench:api`, in a process of its own so that autocannon's work is not done
 * on the event loop of the server it measures (the two still share the machine's cores). The parent sends
 * one `LoadRequest` at a time over IPC and gets `{ measuring: true }` when the warm-up is over, then a
 * `LoadResult` (or `{ error }` alone).
 */
import autocannon from "autocannon";

export type LoadRequest = {
  id: number;
  /** e.g. http://127.0.0.1:4321 */
  origin: string;
  /** paths requested in turn, one after the other across all connections */
  paths: readonly string[];
  connections: number;
  seconds: number;
  /** a first run whose figures are dropped (caches, JIT, connection set-up) */
  warmupSeconds: number;
  /** then this many more dropped requests (one pass over a rotation the caches should hold) */
  warmupRequests: number;
  /**
   * the `Accept-Encoding` every request sends, as real clients do (browsers, fetch/undici, curl --compressed,
   * Python requests all ask for gzip); absent: none, so the server answers identity (`--identity`)
   */
  acceptEncoding?: string;
};

export type LoadResult = {
  id: number;
  requestsPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** mean bytes received per response, headers included: what the wire carried (compressed when gzipped) */
  bytesPerResponse: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
};

function run(
  request: LoadRequest,
  length: { seconds: number } | { amount: number },
): Promise<autocannon.Result> {
  let next = 0;
  return autocannon({
    url: request.origin,
    connections: request.connections,
    ...("seconds" in length ? { duration: length.seconds } : { amount: length.amount }),
    pipelining: 1,
    ...(request.acceptEncoding ? { headers: { "accept-encoding": request.acceptEncoding } } : {}),
    requests: [
      {
        method: "GET",
        setupRequest: (req) => {
          const path = request.paths[next++ % request.paths.length]!;
          return { ...req, path };
        },
      },
    ],
  });
}

async function measure(request: LoadRequest): Promise<LoadResult> {
  if (request.warmupSeconds > 0) await run(request, { seconds: request.warmupSeconds });
  if (request.warmupRequests > 0) await run(request, { amount: request.warmupRequests });
  process.send?.({ id: request.id, measuring: true }); // the server's CPU is counted from here
  const r = await run(request, { seconds: request.seconds });
  const requests = r.requests.total;
  return {
    id: request.id,
    requestsPerSecond: requests / r.duration,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    max: r.latency.max,
    bytesPerResponse: requests > 0 ? r.throughput.total / requests : 0,
    requests,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
  };
}

process.on("message", (message: LoadRequest) => {
  measure(message).then(
    (result) => process.send?.(result),
    (error: unknown) => process.send?.({ id: message.id, error: String(error) }),
  );
});
process.send?.({ ready: true });
