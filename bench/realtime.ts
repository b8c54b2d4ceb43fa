/**
 * `npm run bench:realtime` — how fresh protoscan's WebSocket is (issue 5 item 4, docs/performance.md
 * "Real-time benchmark").
 *
 * Starts anvil mining one block per second with the demo protocols deployed, and protoscan as a child process
 * (`node bin/protoscan.js start`, role all, `pollIntervalSeconds: 1`). Then measures, one phase at a time:
 * (1) polling: receipt available on the node -> `transaction` message on /ws; (2) webhook: signed Alchemy
 * ADDRESS_ACTIVITY request -> message; (3) track-tx: `POST /api/track-tx` -> message; (4) fan-out: 1,000
 * clients in child processes subscribed to `transactions` while 50 protocol transactions are mined per
 * block. Prints p50/p99 per path and PASS/MISS against the targets. Every process it starts is stopped.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { errorMessage } from "../src/internal/errors.ts";
import { startBenchChain } from "./_shared/benchChain.ts";
import { freshPostgresDatabase } from "./_shared/freshPostgresDatabase.ts";
import { runBench } from "./_shared/runBench.ts";
import { type BenchProtoscan, startBenchProtoscan } from "./_shared/startBenchProtoscan.ts";
import { waitCaughtUp } from "./_shared/waitCaughtUp.ts";
import { createTxWatcher } from "./realtime/createTxWatcher.ts";
import { summarizeLatencies } from "./realtime/latencyStats.ts";
import { type FanoutRun, measureFanout } from "./realtime/measureFanout.ts";
import {
  measurePolling,
  measureTrackTx,
  measureWebhook,
  type PathSamples,
} from "./realtime/measureFreshness.ts";
import { parseRealtimeArgs } from "./realtime/realtimeArgs.ts";
import {
  formatRealtimeReport,
  REALTIME_TARGETS,
  type ReportRow,
  verdict,
} from "./realtime/realtimeReport.ts";

const children = new Set<ChildProcess>();
const cleanups: (() => Promise<void>)[] = [];
const say = (line: string) => process.stdout.write(`${line}\n`);

async function cleanup(): Promise<void> {
  for (const child of children) child.kill("SIGKILL");
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined);
}

/** The two rows of a request path: to the WebSocket message (with its target), and to the HTTP response. */
const requestRows = (label: string, path: PathSamples, target: number): ReportRow[] => [
  { label, from: "request -> WS message", summary: summarizeLatencies(path.latencies), target },
  { label, from: "request -> 200", summary: summarizeLatencies(path.responses), target: null },
];

const progressOf = (label: string, total: number) => (done: number) => {
  if (done % 10 === 0 || done === total) process.stdout.write(`\r  ${label}: ${done}/${total}`);
  if (done === total) process.stdout.write("\n");
};

async function main(): Promise<void> {
  const args = parseRealtimeArgs(process.argv.slice(2));
  const work = await mkdtemp(join(tmpdir(), "protoscan-bench-realtime-"));
  cleanups.push(() => rm(work, { recursive: true, force: true }));
  const serverUrl = process.env.DATABASE_URL || undefined;
  const load = [loadavg()[0] ?? 0];

  say("starting anvil (1 s blocks) and deploying the demo protocols…");
  const chain = await startBenchChain();
  cleanups.push(() => chain.anvil.stop());
  let databaseUrl: string | undefined;
  if (serverUrl) {
    const database = await freshPostgresDatabase(serverUrl, "rt");
    cleanups.push(database.drop);
    databaseUrl = database.url;
  }
  say(
    `starting protoscan (node bin/protoscan.js start) on ${databaseUrl ? "PostgreSQL" : "PGlite on disk"}…`,
  );
  const protoscan: BenchProtoscan = await startBenchProtoscan({
    deployment: chain.deployment,
    rpcUrl: chain.anvil.url,
    dir: work,
    ...(args.cpuProfileDir ? { cpuProfileDir: resolve(args.cpuProfileDir) } : {}),
    ...(databaseUrl ? { databaseUrl } : {}),
  });
  cleanups.push(() => protoscan.stop());
  await waitCaughtUp(protoscan.url, chain);
  say(`protoscan listening on ${protoscan.url}, caught up with the chain`);

  const rows: ReportRow[] = [];
  const samples: Record<string, PathSamples> = {};
  const watcher = await createTxWatcher(protoscan.wsUrl);
  const requestOptions = { samples: args.samples, perBlock: args.perBlock };
  if (args.phases.includes("polling")) {
    say(`(1) polling: ${args.samples} DEMO transfers, one per block`);
    samples.polling = await measurePolling(chain, watcher, args.samples, progressOf("polling", args.samples));
    rows.push({
      label: "polling",
      from: "receipt on node -> WS message",
      summary: summarizeLatencies(samples.polling.latencies),
      target: REALTIME_TARGETS.polling,
    });
  }
  if (args.phases.includes("webhook")) {
    say(`(2) webhook: ${args.samples} Alchemy ADDRESS_ACTIVITY deliveries of Disperse calls`);
    samples.webhook = await measureWebhook(
      chain,
      watcher,
      protoscan.url,
      requestOptions,
      progressOf("webhook", args.samples),
    );
    rows.push(...requestRows("webhook", samples.webhook, REALTIME_TARGETS.webhook));
  }
  if (args.phases.includes("track-tx")) {
    say(`(3) track-tx: ${args.samples} POST /api/track-tx of Disperse calls`);
    samples.trackTx = await measureTrackTx(
      chain,
      watcher,
      protoscan.url,
      requestOptions,
      progressOf("track-tx", args.samples),
    );
    rows.push(...requestRows("track-tx", samples.trackTx, REALTIME_TARGETS.trackTx));
  }
  watcher.close();

  let fanout: FanoutRun | undefined;
  if (args.phases.includes("fanout")) {
    say(
      `(4) fan-out: ${args.clients} clients in ${args.clientProcesses} processes, ${args.txPerBlock} tx per 1 s block`,
    );
    fanout = await measureFanout(
      chain,
      { wsUrl: protoscan.wsUrl, protoscanPid: protoscan.process.pid },
      args,
      work,
      children,
      (line) => say(`  ${line}`),
    );
    const label = `fan-out x${fanout.clients}`;
    rows.push(
      {
        label,
        from: "event's 1st client -> each client",
        summary: fanout.spread,
        target: REALTIME_TARGETS.fanout,
      },
      { label, from: "block's 1st message -> each client", summary: fanout.burst, target: null },
    );
  }
  load.push(loadavg()[0] ?? 0);

  say(`\n${formatRealtimeReport(rows)}`);
  if (fanout) {
    const cpu = fanout.cpu;
    const perSecond = (s: number) => `${((s / fanout.windowSeconds) * 100).toFixed(0)}%`;
    say(
      `fan-out: ${fanout.events} events x ${fanout.clients} clients, ${fanout.delivered}/${fanout.expected} delivered, ` +
        `${fanout.closedClients} clients closed by the server; CPU over ${fanout.windowSeconds.toFixed(0)} s: ` +
        `protoscan ${perSecond(cpu.protoscan)}, clients ${perSecond(cpu.clients)}, anvil ${perSecond(cpu.anvil)} of one core`,
    );
  }
  say(
    `machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}), node ${process.version}; database ${databaseUrl ? "PostgreSQL" : "PGlite on disk"}; ` +
      `1-minute load average ${load.map((l) => l.toFixed(1)).join(" -> ")}`,
  );
  if (args.jsonPath) {
    const machine = { cpus: cpus().length, node: process.version, loadAverage: load };
    const results = rows.map((row) => ({ ...row, verdict: verdict(row) }));
    await writeFile(
      args.jsonPath,
      JSON.stringify(
        { date: new Date().toISOString(), machine, args, results, fanout: fanout ?? null, samples },
        null,
        2,
      ),
    );
  }
  const incomplete = fanout !== undefined && fanout.delivered !== fanout.expected;
  if (incomplete) {
    say(`WARNING: ${fanout!.expected - fanout!.delivered} fan-out deliveries never arrived`);
    const stats = await fetch(`${protoscan.url}/api/stats`).then((r) => r.json(), errorMessage);
    say(`protoscan /api/stats: ${JSON.stringify(stats)}`);
  }
  const problems = protoscan.process.lines.filter((line) => (line.level ?? 0) >= 40);
  for (const line of problems.slice(-20)) say(`protoscan logged: ${JSON.stringify(line)}`);
  if (incomplete || rows.some((row) => verdict(row) === "MISS")) process.exitCode = 1;
}

await runBench("realtime", main, { cleanup });
