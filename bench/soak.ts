/**
 * `npm run bench:soak` — protoscan under a steady mixed load for 10 minutes (issue 8 item 3,
 * docs/reliability.md "Soak").
 *
 * Starts anvil mining one block per second with the demo protocols deployed and the demo activity generator
 * sending into it, and protoscan as a child process (`node bin/protoscan.js start`, role all, PGlite on disk
 * or a fresh PostgreSQL database when DATABASE_URL is set, `pollIntervalSeconds: 1`, an Alchemy signing key).
 * Then, for the whole run: API reads at a steady rate over ten endpoints, WebSocket clients joining, leaving
 * and checking every message, signed webhook deliveries (some repeated) of transactions only webhooks bring
 * in, and the RSS of the protoscan process every 2 s. Prints throughput, p99 per endpoint per window, RSS per
 * window, errors by kind and a PASS/MISS line per criterion; exits 1 on any error or MISS. Everything it
 * starts is stopped on exit, on SIGINT/SIGTERM and on errors.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { getAddress, type Hex } from "viem";
import { type Activity, type ActivityKind, startActivity } from "../src/demo/activity.ts";
import { errorMessage } from "../src/internal/errors.ts";
import { type BenchChain, sleep, startBenchChain } from "./_shared/benchChain.ts";
import { freshPostgresDatabase } from "./_shared/freshPostgresDatabase.ts";
import { runBench } from "./_shared/runBench.ts";
import { type BenchProtoscan, startBenchProtoscan } from "./_shared/startBenchProtoscan.ts";
import { waitCaughtUp } from "./_shared/waitCaughtUp.ts";
import { createErrorTally, type ErrorTally } from "./soak/errorTally.ts";
import { judgeRss, type RssSample } from "./soak/judgeRss.ts";
import { sampleRss } from "./soak/sampleRss.ts";
import { parseSoakArgs } from "./soak/soakArgs.ts";
import { type SoakEndpoint, type SoakPools, soakEndpoints } from "./soak/soakEndpoints.ts";
import { type Criterion, describeRss, formatCriteria, formatWindowTable } from "./soak/soakReport.ts";
import { createSoakWindows, type SoakWindows } from "./soak/soakWindows.ts";
import { startApiLoad } from "./soak/startApiLoad.ts";
import { startWebhookDeliveries } from "./soak/startWebhookDeliveries.ts";
import { startWsChurn } from "./soak/startWsChurn.ts";

/** Demo activity the polling indexer must see: calls to the router and the vault (exclusive contracts). */
const POLLED_KINDS: ReadonlySet<ActivityKind> = new Set([
  "swap",
  "addLiquidity",
  "removeLiquidity",
  "deposit",
  "withdraw",
  "claim",
]);
/** How long a transaction may take from its receipt to its broadcast before it is declared missing. */
const BROADCAST_DEADLINE_MS = 60_000;
/** Blocks the indexer may trail the node by when the load stops (one 1 s poll plus a block in the making). */
const MAX_FINAL_LAG = 3;
const RSS_EVERY_MS = 2_000;

/** What to undo at the end, last first; `external` ones (processes, the database, files) also on a signal. */
const cleanups: { fn: () => Promise<void>; external: boolean }[] = [];
const atExit = (fn: () => Promise<void>, external = false) => cleanups.push({ fn, external });
const say = (line: string) => process.stdout.write(`${line}\n`);

async function cleanup(onlyExternal = false): Promise<void> {
  for (const { fn, external } of cleanups.splice(0).reverse()) {
    if (external || !onlyExternal) await fn().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const args = parseSoakArgs(process.argv.slice(2));
  const work = await mkdtemp(join(tmpdir(), "protoscan-bench-soak-"));
  atExit(() => rm(work, { recursive: true, force: true }), true);
  const serverUrl = process.env.DATABASE_URL || undefined;

  say("starting anvil (1 s blocks) and deploying the demo protocols…");
  const chain: BenchChain = await startBenchChain();
  atExit(() => chain.anvil.stop(), true);
  let databaseUrl: string | undefined;
  if (serverUrl) {
    const database = await freshPostgresDatabase(serverUrl, "soak");
    atExit(database.drop, true);
    databaseUrl = database.url;
  }
  const databaseName = databaseUrl ? "PostgreSQL (fresh database)" : "PGlite on disk";
  say(`starting protoscan (node bin/protoscan.js start) on ${databaseName}…`);
  const protoscan: BenchProtoscan = await startBenchProtoscan({
    deployment: chain.deployment,
    rpcUrl: chain.anvil.url,
    dir: work,
    ...(databaseUrl ? { databaseUrl } : {}),
  });
  atExit(() => protoscan.stop(), true);
  await waitCaughtUp(protoscan.url, chain);
  say(`protoscan (pid ${protoscan.process.pid}) listening on ${protoscan.url}, caught up with the chain`);

  const errors = createErrorTally();
  const windowCount = args.durationSeconds / args.windowSeconds;
  // Created when the measured load starts, after the warm-up pass.
  let windows: SoakWindows | undefined;
  const d = chain.deployment;
  const indexedHashes: string[] = [];
  const indexedBlocks: number[] = [];
  const pools: SoakPools = { indexedHashes, indexedBlocks };
  const broadcast = new Set<string>();
  const expected = new Map<string, { since: number; what: string }>();
  const wsMessages = new Array<number>(windowCount).fill(0);
  const expect = (hash: string, what: string) => {
    if (!broadcast.has(hash.toLowerCase())) expected.set(hash.toLowerCase(), { since: Date.now(), what });
  };
  const webhookHashes: Hex[] = [];

  // The demo activity: one random protocol transaction at a time, each awaited until mined (~1 per block).
  let activityMined = 0;
  const activity: Activity = startActivity({
    rpcUrl: chain.anvil.url,
    deployment: d,
    intervalMs: 0,
    onTransaction: (event) => {
      activityMined++;
      if (POLLED_KINDS.has(event.kind)) expect(event.hash, `demo ${event.kind}`);
    },
  });
  atExit(() => activity.stop());

  const topicChoices = [
    "transactions",
    "protocol:demoswap",
    "protocol:demovault",
    `token:${getAddress(d.tokens.DEMO.address)}`,
    `token:${d.tokens.USDC.address.toLowerCase()}`,
    ...d.users.map((u) => `address:${u.toLowerCase()}`),
  ];
  const churn = startWsChurn({
    wsUrl: protoscan.wsUrl,
    clients: args.wsClients,
    churnMs: args.churnMs,
    topicsFor: (i) => {
      const count = 1 + (i % 3);
      return Array.from({ length: count }, (_, k) => topicChoices[(i * 5 + k * 3) % topicChoices.length]!);
    },
    errors,
    onTransaction: (hash, blockNumber) => {
      if (windows) wsMessages[windows.at()]!++;
      broadcast.add(hash);
      expected.delete(hash);
      indexedHashes.push(hash);
      indexedBlocks.push(blockNumber);
      // Keep the pools to the latest 500: reads go to fresh data, and memory stays bounded here too.
      if (indexedHashes.length > 500) indexedHashes.splice(0, 100);
      if (indexedBlocks.length > 500) indexedBlocks.splice(0, 100);
    },
  });
  atExit(async () => churn.stop());
  const webhooks = startWebhookDeliveries({
    chain,
    apiUrl: protoscan.url,
    everyMs: args.webhookMs,
    errors,
    expect: (hash) => {
      webhookHashes.push(hash);
      expect(hash, "webhook delivery");
    },
  });
  atExit(() => webhooks.stop());
  const endpoints = soakEndpoints(d);
  await warmUp(protoscan.url, endpoints, pools, errors);
  windows = createSoakWindows(args.windowSeconds * 1000, windowCount);
  const load = startApiLoad({ apiUrl: protoscan.url, rate: args.rate, endpoints, pools, windows, errors });
  atExit(() => load.stop());

  const rss: RssSample[] = [];
  const loadByWindow: number[] = [];
  const checkMissing = (deadlineMs: number) => {
    for (const [hash, { since, what }] of expected) {
      if (Date.now() - since > deadlineMs) {
        errors.add("ws missing transaction", `${what} ${hash} not broadcast within ${deadlineMs / 1000} s`);
        expected.delete(hash);
      }
    }
  };
  say(
    `soak: ${args.durationSeconds} s in ${windows.count} windows of ${args.windowSeconds} s; ${args.rate} req/s; ` +
      `${args.wsClients} WebSocket clients, one replaced every ${args.churnMs} ms; a webhook delivery every ${args.webhookMs} ms`,
  );
  const end = windows.start + args.durationSeconds * 1000;
  let lastWindow = 0;
  while (performance.now() < end) {
    try {
      rss.push({ atMs: windows.elapsed(), bytes: await sampleRss(protoscan.process.pid) });
    } catch (error) {
      errors.add("protoscan process gone", errorMessage(error));
      break;
    }
    checkMissing(BROADCAST_DEADLINE_MS);
    const current = windows.at();
    if (current !== lastWindow) {
      loadByWindow.push(loadavg()[0] ?? 0);
      const last = rss[rss.length - 1]!;
      say(
        `  window ${lastWindow + 1}/${windows.count}: ${load.completed[lastWindow]} requests, ` +
          `${wsMessages[lastWindow]} watcher messages, RSS ${(last.bytes / 1024 / 1024).toFixed(0)} MB, ` +
          `${errors.total()} errors so far, load ${loadavg()[0]?.toFixed(1)}`,
      );
      lastWindow = current;
    }
    await sleep(Math.min(RSS_EVERY_MS, Math.max(0, end - performance.now())));
  }
  loadByWindow.push(loadavg()[0] ?? 0);

  // Drain: stop the load, let the last transactions reach the indexer and the watcher.
  say("load done; draining…");
  await load.stop();
  await webhooks.stop();
  await activity.stop();
  const drainDeadline = Date.now() + BROADCAST_DEADLINE_MS;
  while (expected.size > 0 && Date.now() < drainDeadline) await sleep(250);
  checkMissing(0);
  const lag = await finalLag(protoscan.url, chain);
  const leakedConnections = await serverConnectionsBeyond(protoscan.url, churn.open());
  const webhookStored = await checkWebhookTransactions(protoscan.url, webhookHashes);
  churn.stop();
  for (const problem of webhookStored) errors.add("webhook transaction not stored", problem);
  const logged = protoscan.process.lines.filter((line) => (line.level ?? 0) >= 50);
  for (const line of logged) errors.add("protoscan logged an error", JSON.stringify(line));
  const warnings = protoscan.process.lines.filter((line) => line.level === 40);
  // Graceful shutdown after the load: SIGTERM must end it with exit code 0 (operations.md: under 10 s).
  const stopStarted = performance.now();
  protoscan.process.signal("SIGTERM");
  const exit = await protoscan.process.waitForExit(15_000).catch(() => ({ code: null, signal: "SIGKILL" }));
  const stopSeconds = (performance.now() - stopStarted) / 1000;

  // Report.
  const verdict = judgeRss(rss, windows.windowMs, windows.count);
  const labels = new Map(endpoints.map((e) => [e.key, e.label]));
  say("");
  say(
    formatWindowTable({
      windowSeconds: args.windowSeconds,
      labels,
      latencies: load.latencies,
      completed: load.completed,
      rss: verdict,
      load: loadByWindow,
      wsMessages,
      wsReady: bucket(churn.stats.ready, windows),
    }),
  );
  const completed = load.completed.reduce((a, b) => a + b, 0);
  const throughput = completed / args.durationSeconds;
  say("");
  say(
    `reads: ${load.sent()} scheduled, ${completed} completed, ${load.skipped()} skipped (200 already in flight), ` +
      `${throughput.toFixed(1)} req/s over ${args.durationSeconds} s`,
  );
  say(
    `WebSocket: ${churn.stats.connected} connections, ${churn.stats.left} left, ${churn.stats.transactionMessages} ` +
      `transaction messages checked, ${churn.stats.pongs} pongs, ${broadcast.size} distinct transactions on the watcher`,
  );
  say(
    `webhooks: ${webhooks.stats.transactions} transactions, ${webhooks.stats.delivered} deliveries answered 200 ` +
      `(${webhooks.stats.resent} resent with the same id, ${webhooks.stats.redelivered} redelivered under a new id; ` +
      `${webhooks.stats.retries} attempts repeated after a 5xx or timeout, as a provider does)`,
  );
  say(`chain: ${activityMined} demo activity transactions mined; indexer lag at the end ${lag} blocks`);
  say(`RSS: ${describeRss(verdict)}`);
  say(`errors by kind (${errors.total()}):`);
  for (const [kind, count] of errors.counts()) {
    say(`  ${kind}: ${count}`);
    for (const example of errors.examples(kind)) say(`    e.g. ${example}`);
  }
  if (warnings.length > 0) {
    say(`protoscan logged ${warnings.length} warnings; the last ones:`);
    for (const line of warnings.slice(-5)) say(`  ${JSON.stringify(line).slice(0, 300)}`);
  }
  const criteria: Criterion[] = [
    { name: "errors", pass: errors.total() === 0, detail: `${errors.total()} (must be 0)` },
    {
      name: "throughput",
      pass: throughput >= args.rate * 0.95,
      detail: `${throughput.toFixed(1)} req/s completed of ${args.rate} scheduled (>= 95%)`,
    },
    { name: "RSS flat", pass: verdict.flat, detail: describeRss(verdict) },
    {
      name: "every transaction broadcast",
      pass: broadcast.size > 0 && expected.size === 0,
      detail: `${broadcast.size} on the watcher; missing ones count as errors`,
    },
    {
      name: "WebSocket connections released",
      pass: leakedConnections === 0,
      detail: `${leakedConnections} server connections beyond the clients still open`,
    },
    {
      name: "indexer kept up",
      pass: lag <= MAX_FINAL_LAG,
      detail: `lag ${lag} blocks (<= ${MAX_FINAL_LAG})`,
    },
    {
      name: "graceful shutdown",
      pass: exit.code === 0 && stopSeconds < 10,
      detail: `SIGTERM -> exit ${exit.code ?? exit.signal} in ${stopSeconds.toFixed(1)} s (0, under 10 s)`,
    },
  ];
  say("");
  say(formatCriteria(criteria));
  say(
    `machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}), node ${process.version}; database ${databaseName}; ` +
      `1-minute load average per window ${loadByWindow.map((l) => l.toFixed(1)).join(" ")}; ${new Date().toISOString()}`,
  );
  if (args.jsonPath) {
    const latencyP99 = Object.fromEntries(
      [...load.latencies].map(([key, w]) => [key, w.map((samples) => [...samples].sort((a, b) => a - b))]),
    );
    await writeFile(
      args.jsonPath,
      JSON.stringify(
        {
          date: new Date().toISOString(),
          database: databaseName,
          args,
          loadAverage: loadByWindow,
          completed: load.completed,
          rss: { samples: rss, verdict },
          errors: Object.fromEntries(errors.counts()),
          criteria,
          latencies: latencyP99,
        },
        null,
        2,
      ),
    );
  }
  if (criteria.some((c) => !c.pass)) process.exitCode = 1;
}

/**
 * Before the clock starts: wait for the first broadcast transaction (so tx by hash has one to read), then
 * request every endpoint's first three URLs one at a time, so the measured windows do not start with every
 * cache cold at once. Answers are checked like any other.
 */
async function warmUp(
  apiUrl: string,
  endpoints: readonly SoakEndpoint[],
  pools: SoakPools,
  errors: ErrorTally,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (pools.indexedHashes.length === 0 && Date.now() < deadline) await sleep(250);
  for (const endpoint of endpoints) {
    for (let i = 0; i < 3; i++) {
      const path = endpoint.next(pools, i);
      if (path === null) continue;
      const response = await fetch(`${apiUrl}${path}`);
      const text = await response.text();
      if (response.status !== 200)
        errors.add(`http ${response.status}`, `warm-up ${path}: ${text.slice(0, 200)}`);
    }
  }
}

/** `{at, ms}` samples (at: `performance.now()`) as the ms of each window. */
function bucket(samples: readonly { at: number; ms: number }[], windows: SoakWindows): number[][] {
  const out = Array.from({ length: windows.count }, () => [] as number[]);
  for (const s of samples) out[windows.at(s.at)]!.push(s.ms);
  return out;
}

/** Node head minus protoscan's indexed block, read once the load has stopped (polled for up to 10 s). */
async function finalLag(apiUrl: string, chain: BenchChain): Promise<number> {
  let lag = Number.POSITIVE_INFINITY;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const stats = (await (await fetch(`${apiUrl}/api/stats`)).json()) as {
      indexer?: { indexedBlock?: number };
    };
    lag = (await chain.blockNumber()) - (stats.indexer?.indexedBlock ?? -1);
    if (lag <= 1) return lag;
    await sleep(500);
  }
  return lag;
}

/**
 * `protoscan_ws_connections` from /metrics minus the clients still open here: 0 unless the server kept
 * connections of clients that left. Polled for up to 10 s, as a dropped TCP connection takes a moment to
 * be noticed.
 */
async function serverConnectionsBeyond(apiUrl: string, open: number): Promise<number> {
  let beyond = Number.POSITIVE_INFINITY;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const text = await (await fetch(`${apiUrl}/metrics`)).text();
    const match = /^protoscan_ws_connections(?:\{[^}]*\})? (\d+)$/m.exec(text);
    beyond = match ? Number(match[1]) - open : Number.POSITIVE_INFINITY;
    if (beyond === 0) return 0;
    await sleep(500);
  }
  return beyond;
}

/** Each webhook-delivered transaction must be stored, as `source: "webhook"` (polling cannot see it). */
async function checkWebhookTransactions(apiUrl: string, hashes: readonly Hex[]): Promise<string[]> {
  const problems: string[] = [];
  for (const hash of hashes) {
    const response = await fetch(`${apiUrl}/api/tx/${hash}`);
    const body = (await response.json()) as { source?: string };
    if (response.status !== 200) problems.push(`${hash}: GET /api/tx answered ${response.status}`);
    else if (body.source !== "webhook") problems.push(`${hash}: source ${body.source}, not webhook`);
  }
  return problems;
}

await runBench("soak", main, {
  cleanup: () => cleanup(),
  onSignal(signal) {
    // The loops in this process end with it; what outlives it (anvil, protoscan, the database) is stopped.
    say(`\n${signal}: stopping everything the soak started…`);
    return cleanup(true);
  },
});
