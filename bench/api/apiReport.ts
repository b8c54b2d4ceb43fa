import type { Endpoint } from "./endpoints.ts";
import type { LoadResult } from "./loadWorker.ts";

/**
 * What the load worker measured, with the server's CPU time per request (µs, this process, warm-up excluded)
 * and the uncompressed body of the endpoint's first path (bytes; `bytesPerResponse` is what the wire carried).
 */
export type ServerResult = LoadResult & {
  cpuMicrosPerRequest: number;
  /** of it, the main thread's (the event loop's); null where /proc is missing */
  eventLoopMicrosPerRequest?: number | null;
  bodyBytes: number;
};

export type Measured = { endpoint: Endpoint; result: ServerResult };

export type Verdict = {
  measured: Measured;
  /** the bare `node:http` ceiling of the most similar body size, and this endpoint's req/s as a share of it */
  ceiling: Measured | null;
  ratio: number | null;
  /**
   * the endpoint's req/s over its paired ceiling's, one per round (`Endpoint.pairedCeiling`); `ratio` is their
   * median when there are any
   */
  pairedRatios: number[];
  /** the same against the bare Fastify ceiling (information: what the framework itself costs) */
  fastifyRatio: number | null;
  /**
   * the `node:http` ceiling's server CPU per request over this endpoint's (information): the req/s a server
   * with a core of its own would reach, as a share of the ceiling's
   */
  cpuRatio: number | null;
  /** PASS, MISS (a target missed), ERROR (non-2xx answers or socket errors: the figures are not valid) */
  status: "PASS" | "MISS" | "ERROR" | "-";
  misses: string[];
};

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/**
 * One measurement per endpoint from several rounds of the same endpoints: the median of each rate, latency
 * and CPU figure (the worst `max`), and the sums of the counts, so an error in any round is still an error.
 */
export function medianOfRounds(rounds: readonly (readonly Measured[])[]): Measured[] {
  return (rounds[0] ?? []).map(({ endpoint }) => {
    const results = rounds
      .flatMap((round) => round.filter((m) => m.endpoint.key === endpoint.key))
      .map((m) => m.result);
    const mid = (pick: (r: ServerResult) => number) => median(results.map(pick));
    const sum = (pick: (r: ServerResult) => number) => results.reduce((total, r) => total + pick(r), 0);
    return {
      endpoint,
      result: {
        id: results[0]!.id,
        requestsPerSecond: mid((r) => r.requestsPerSecond),
        p50: mid((r) => r.p50),
        p90: mid((r) => r.p90),
        p99: mid((r) => r.p99),
        max: Math.max(...results.map((r) => r.max)),
        bytesPerResponse: mid((r) => r.bytesPerResponse),
        bodyBytes: mid((r) => r.bodyBytes),
        requests: sum((r) => r.requests),
        non2xx: sum((r) => r.non2xx),
        errors: sum((r) => r.errors),
        timeouts: sum((r) => r.timeouts),
        cpuMicrosPerRequest: mid((r) => r.cpuMicrosPerRequest),
      },
    };
  });
}

/**
 * The ceiling whose mean response size on the wire is closest to `m`'s (on a log scale): with compression, the
 * ceilings gzip their bodies as the API does, so a gzipped answer is compared with a gzipped ceiling.
 */
function nearestCeiling(m: Measured, ceilings: readonly Measured[]): Measured | null {
  let best: Measured | null = null;
  for (const c of ceilings) {
    const d = Math.abs(Math.log(c.result.bytesPerResponse / m.result.bytesPerResponse));
    if (!best || d < Math.abs(Math.log(best.result.bytesPerResponse / m.result.bytesPerResponse))) best = c;
  }
  return best;
}

/**
 * Check every measured endpoint against its targets (ratios against the `node:http` ceilings). `paired`: per
 * endpoint key, its req/s over its paired ceiling's measured right before it, one per round. Such an endpoint's
 * ratio is their median: on a shared machine whose speed drifts within minutes, a share of a ceiling measured
 * at the start of the round says as much about the drift as about the endpoint.
 */
export function judge(
  all: readonly Measured[],
  paired: ReadonlyMap<string, readonly number[]> = new Map(),
): Verdict[] {
  const nodeCeilings = all.filter((m) => m.endpoint.ceiling === "node");
  const fastifyCeilings = all.filter((m) => m.endpoint.ceiling === "fastify");
  const share = (m: Measured, c: Measured | null) =>
    c ? m.result.requestsPerSecond / c.result.requestsPerSecond : null;
  return all.map((m) => {
    const failed = m.result.non2xx > 0 || m.result.errors > 0 || m.result.requests === 0;
    if (m.endpoint.ceiling) {
      const status = failed ? "ERROR" : "-";
      return {
        measured: m,
        ceiling: null,
        ratio: null,
        pairedRatios: [],
        fastifyRatio: null,
        cpuRatio: null,
        status,
        misses: [],
      };
    }
    const pairedRatios = [...(paired.get(m.endpoint.key) ?? [])];
    const pairedWith = nodeCeilings.find((c) => c.endpoint.key === m.endpoint.pairedCeiling);
    const ceiling = pairedRatios.length > 0 && pairedWith ? pairedWith : nearestCeiling(m, nodeCeilings);
    const ratio = pairedRatios.length > 0 ? median(pairedRatios) : share(m, ceiling);
    const fastifyRatio = share(m, nearestCeiling(m, fastifyCeilings));
    const cpuRatio =
      ceiling && m.result.cpuMicrosPerRequest > 0
        ? ceiling.result.cpuMicrosPerRequest / m.result.cpuMicrosPerRequest
        : null;
    const misses: string[] = [];
    const { p99TargetMs, minCeilingRatio } = m.endpoint;
    if (p99TargetMs !== null && m.result.p99 > p99TargetMs)
      misses.push(`p99 ${m.result.p99} ms > ${p99TargetMs} ms`);
    if (minCeilingRatio !== null && ratio !== null && ratio < minCeilingRatio) {
      const which =
        pairedRatios.length > 0 ? "the node:http ceiling measured beside it" : "the node:http ceiling";
      misses.push(`${(ratio * 100).toFixed(0)}% of ${which} < ${minCeilingRatio * 100}%`);
    }
    const status = failed ? "ERROR" : misses.length > 0 ? "MISS" : "PASS";
    return { measured: m, ceiling, ratio, pairedRatios, fastifyRatio, cpuRatio, status, misses };
  });
}

/** The results table printed by `npm run bench:api` (markdown, so it can be pasted into the docs). */
export function formatTable(verdicts: readonly Verdict[]): string {
  const head = [
    "endpoint",
    "req/s",
    "p50 ms",
    "p99 ms",
    "max ms",
    "bytes wire/body",
    "vs node:http",
    "vs Fastify",
    "CPU µs/req",
    "CPU vs node:http",
    "target",
    "result",
  ];
  const percent = (ratio: number | null) => (ratio === null ? "-" : `${(ratio * 100).toFixed(0)}%`);
  const rows = verdicts.map((v) => {
    const r = v.measured.result;
    const e = v.measured.endpoint;
    const targets = [
      ...(e.p99TargetMs === null ? [] : [`p99<=${e.p99TargetMs}`]),
      ...(e.minCeilingRatio === null ? [] : [`>=${e.minCeilingRatio * 100}%`]),
    ];
    return [
      e.label,
      r.requestsPerSecond.toFixed(0),
      String(r.p50),
      String(r.p99),
      String(r.max),
      `${r.bytesPerResponse.toFixed(0)}/${r.bodyBytes.toFixed(0)}`,
      v.ratio === null
        ? "-"
        : `${percent(v.ratio)} (${v.ceiling?.endpoint.key === "ceilingNodeTx" ? "tx" : "page"}${v.pairedRatios.length > 0 ? ", paired" : ""})`,
      percent(v.fastifyRatio),
      r.cpuMicrosPerRequest.toFixed(1),
      percent(v.cpuRatio),
      targets.join(", ") || "-",
      v.status,
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 || i >= 10 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (i === 0 || i >= 10 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`;
  const notes = verdicts.flatMap((v) => {
    const r = v.measured.result;
    const out =
      v.pairedRatios.length > 0
        ? [
            `  paired  ${v.measured.endpoint.label}: ${v.pairedRatios.map(percent).join(", ")} of the ceiling measured right before it, by round (median ${percent(v.ratio)})`,
          ]
        : [];
    out.push(...v.misses.map((m) => `  MISS  ${v.measured.endpoint.label}: ${m}`));
    if (v.status === "ERROR") {
      out.push(
        `  ERROR ${v.measured.endpoint.label}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts of ${r.requests}`,
      );
    }
    return out;
  });
  return [line(head), rule, ...rows.map(line), ...(notes.length > 0 ? ["", ...notes] : [])].join("\n");
}
