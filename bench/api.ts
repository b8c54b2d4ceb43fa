/**
 * `npm run bench:api` — the read API under load (issue 4 item 6, issue 6).
 *
 * Seeds a database with 100,000 transactions (200,000 tracked-token transfers, about 300,000 logs) whose
 * DEMO token has 50,000 holders, through the store's own write path (`commitBatch`), checks that the
 * counters the triggers keep match the generator's account, starts the API (`buildApp`, listening on
 * 127.0.0.1) in this process with a stand-in JSON-RPC node in a child process, and measures each endpoint
 * with autocannon (50 connections, 10 s after a 2 s warm-up) run from another child process. A bare Fastify
 * route returning a constant body of a transaction's size and of a page's size, served by this process too,
 * gives the framework ceiling. Prints req/s, p50/p99 and PASS/MISS per target. See docs/performance.md.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { buildApp } from "../src/api/buildApp.ts";
import { createChainClient } from "../src/chain/createChainClient.ts";
import { createLocalBroadcaster } from "../src/ingest/broadcaster.ts";
import type { Common } from "../src/internal/common.ts";
import { errorMessage } from "../src/internal/errors.ts";
import { createLogger } from "../src/internal/logger.ts";
import { createMetrics } from "../src/internal/metrics.ts";
import { createShutdown } from "../src/internal/shutdown.ts";
import { tuneV8 } from "../src/internal/tuneV8.ts";
import { maintainTables } from "../src/store/maintainTables.ts";
import { parseApiBenchArgs } from "./api/apiBenchArgs.ts";
import { apiBenchConfig, BENCH_CONTRACTS, BENCH_TOKENS } from "./api/apiBenchConfig.ts";
import { formatTable, judge, type Measured } from "./api/apiReport.ts";
import { type BenchDatabase, openBenchDatabase } from "./api/benchDatabase.ts";
import { caughtUpIndexer } from "./api/caughtUpIndexer.ts";
import { type Child, runningChildren, startChild } from "./api/children.ts";
import { createDataset } from "./api/dataset.ts";
import { apiEndpoints, ceilingEndpoints, type Endpoint } from "./api/endpoints.ts";
import type { LoadRequest, LoadResult } from "./api/loadWorker.ts";
import type { StandInSetup } from "./api/rpcStandIn.ts";
import { seedDatabase, verifySeed } from "./api/seed.ts";

// The server runs with the V8 settings `protoscan start` runs with.
tuneV8();

const cleanups: (() => Promise<unknown>)[] = [];
const out = (line: string) => process.stdout.write(`${line}\n`);

async function cleanup(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined);
  for (const child of runningChildren()) await child.stop();
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void cleanup().finally(() => process.exit(130));
  });
}

/**
 * Profile this process (the server) with the V8 inspector until `stop()`, which returns the profile as
 * `.cpuprofile` JSON (open it in Chrome DevTools or speedscope). Warm-up included; the profiler costs a
 * few percent of throughput.
 */
async function startProfiler(): Promise<{ stop(): Promise<object> }> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return {
    async stop() {
      const { profile } = await session.post("Profiler.stop");
      session.disconnect();
      return profile;
    },
  };
}

/** GET a path of a local server and parse its JSON body; throws on anything but 200. */
async function getJson(origin: string, path: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${origin}${path}`);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * Follow `nextCursor` from page 1 of an address's transactions to page `page` (or the last page, on a small
 * dataset); returns that page's path and number.
 */
async function cursorPagePath(
  origin: string,
  address: string,
  page: number,
): Promise<{ path: string; page: number }> {
  const base = `/api/address/${address}/transactions`;
  let path = base;
  let reached = 1;
  while (reached < page) {
    const body = await getJson(origin, path);
    if (typeof body.nextCursor !== "string") break;
    path = `${base}?cursor=${encodeURIComponent(body.nextCursor)}`;
    reached++;
  }
  return { path, page: reached };
}

async function main(): Promise<void> {
  const args = parseApiBenchArgs(process.argv.slice(2));
  const serverUrl = process.env.DATABASE_URL || undefined;
  const logger = createLogger({ level: "warn" });

  const bench: BenchDatabase = await openBenchDatabase({
    serverUrl,
    dataDir: args.dataDir ?? undefined,
    logger,
  });
  cleanups.push(() => bench.cleanup());
  const db = bench.database.db;
  out(
    `database: ${bench.description}; API shaped as ${bench.database.kind === "pglite" ? "`protoscan start` (role all, in-process indexer caught up)" : "a `--role api` replica"}`,
  );

  const dataset = createDataset({ transactions: args.transactions, holders: args.holders });
  out(`seeding ${args.transactions} transactions (blocks ${dataset.firstBlock}-${dataset.lastBlock})…`);
  const seed = await seedDatabase(db, apiBenchConfig("http://127.0.0.1:1"), dataset, out);
  await verifySeed(db, dataset);
  const e = dataset.expectations;
  const demo = e.tokens().get(BENCH_TOKENS.DEMO.address);
  const datasetLine =
    `${seed.transactions} transactions, ${seed.transfers} transfers, ${seed.logs} logs, ` +
    `${e.addresses()} addresses, DEMO ${demo?.holders} holders / ${demo?.transfers} transfers`;
  out(`seeded in ${seed.seconds.toFixed(1)} s: ${datasetLine}; counters and balances checked`);
  // What protoscan's writer does every 30 s on PGlite, and autovacuum soon after a bulk load on PostgreSQL.
  const maintenanceStarted = performance.now();
  const maintained = await maintainTables(db);
  out(
    `vacuumed and analyzed ${maintained.length} tables in ${((performance.now() - maintenanceStarted) / 1000).toFixed(1)} s (store/maintainTables.ts)`,
  );

  const rpc: Child = startChild("./rpcStandIn.ts");
  const setup: StandInSetup = {
    chainId: 31337,
    head: dataset.lastBlock,
    supplies: Object.fromEntries([...e.tokens()].map(([token, t]) => [token, t.supply.toString()])),
    contracts: [...Object.values(BENCH_CONTRACTS), ...Object.values(BENCH_TOKENS).map((t) => t.address)],
  };
  const { port: rpcPort } = await rpc.ask<{ port: number }>(setup);

  const config = apiBenchConfig(`http://127.0.0.1:${rpcPort}`);
  const common: Common = { config, logger, metrics: createMetrics(), shutdown: createShutdown() };
  const chain = createChainClient(common);
  cleanups.push(async () => chain.close());
  // The events of a quiet chain: nothing is stored during the run, so the response caches of the transaction
  // routes are never emptied (on a live chain, the recent lists are read again after each commit).
  const events = createLocalBroadcaster();
  // On PGlite the API runs in the indexer's process (role all) and reads its status from memory; on
  // PostgreSQL the benchmark is shaped like a `--role api` replica, which reads the committed cursor.
  const indexer =
    bench.database.kind === "pglite" ? caughtUpIndexer(dataset.lastBlock, new Date()) : undefined;
  const app = await buildApp(common, {
    database: bench.database,
    chain,
    events,
    ...(indexer ? { indexer } : {}),
  });
  cleanups.push(() => app.close());
  const origin = await app.listen({ host: "127.0.0.1", port: 0 });

  // Inputs: hashes spread over the whole history, the busiest user's page 10, the 1,000 busiest users.
  const hashes = e.hashes().filter((_, i) => i % 10 === 7);
  const busiest = e.busiest(1000, new Set(dataset.users));
  const top = busiest[0]!;
  const endpoints = apiEndpoints({
    hashes,
    coldHashes: e.hashes(),
    addresses: busiest.map((b) => b.address),
    addressPage: await cursorPagePath(origin, top.address, 10),
    busiest: top.address,
  });

  // The ceiling: the same process, a bare Fastify (no plugins, no schemas) sending a constant JSON body, a
  // real response's bytes, serialized and encoded once (a Buffer, as the API's cached bodies are).
  const txBody = Buffer.from(JSON.stringify(await getJson(origin, `/api/tx/${hashes[0]}`)));
  const pageBody = Buffer.from(JSON.stringify(await getJson(origin, "/api/transactions/recent")));
  const ceilingApp = Fastify({ logger: false });
  const json = "application/json; charset=utf-8";
  ceilingApp.get("/ceiling/tx", (_request, reply) => reply.type(json).send(txBody));
  ceilingApp.get("/ceiling/page", (_request, reply) => reply.type(json).send(pageBody));
  cleanups.push(() => ceilingApp.close());
  const ceilingOrigin = await ceilingApp.listen({ host: "127.0.0.1", port: 0 });

  const selected = endpoints.filter((ep) => !args.only || args.only.some((k) => ep.key.includes(k)));
  for (const ep of selected) await getJson(origin, ep.paths[0]!); // every URL answers 200 before we measure

  const load = startChild("./loadWorker.ts");
  await load.next();
  out(
    `\nload: autocannon in a child process (pid ${load.pid}), ${args.connections} connections, ` +
      `${args.warmupSeconds} s warm-up + ${args.seconds} s per endpoint; server: this process (pid ${process.pid})`,
  );
  const measured: Measured[] = [];
  let id = 0;
  const measure = async (endpoint: Endpoint, at: string) => {
    const request: LoadRequest = {
      id: ++id,
      origin: at,
      paths: endpoint.paths,
      connections: args.connections,
      seconds: args.seconds,
      warmupSeconds: args.warmupSeconds,
      warmupRequests: endpoint.warmFullRotation ? endpoint.paths.length : 0,
    };
    const profiler = args.profileDir ? await startProfiler() : null;
    const result = await load.ask<LoadResult & { error?: string }>(request);
    if (profiler && args.profileDir) {
      const file = join(args.profileDir, `${endpoint.key}.cpuprofile`);
      await mkdir(args.profileDir, { recursive: true });
      await writeFile(file, JSON.stringify(await profiler.stop()));
    }
    if (result.error) throw new Error(`autocannon failed on ${endpoint.label}: ${result.error}`);
    measured.push({ endpoint, result });
    out(
      `  ${endpoint.label}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms`,
    );
  };
  for (const ep of ceilingEndpoints()) await measure(ep, ceilingOrigin);
  for (const ep of selected) await measure(ep, origin);

  const verdicts = judge(measured);
  out(`\n${formatTable(verdicts)}`);
  const machine = `${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`;
  out(
    `\ndate: ${new Date().toISOString()}; machine: ${machine}; 1-minute load average after: ${loadavg()[0]?.toFixed(1)}`,
  );
  out(`database: ${bench.description}; dataset: ${datasetLine}`);
  out(`address transactions: ${top.address} (${top.transactions} transactions), followed by cursor`);
  if (args.jsonPath) {
    await writeFile(
      args.jsonPath,
      JSON.stringify(
        {
          date: new Date().toISOString(),
          machine,
          database: bench.description,
          dataset: datasetLine,
          args,
          results: verdicts.map((v) => ({
            key: v.measured.endpoint.key,
            label: v.measured.endpoint.label,
            ...v.measured.result,
            ratio: v.ratio,
            status: v.status,
            misses: v.misses,
          })),
        },
        null,
        2,
      ),
    );
  }
  if (verdicts.some((v) => v.status === "ERROR")) process.exitCode = 1;
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench:api failed: ${errorMessage(error)}\n`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
