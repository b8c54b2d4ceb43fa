/**
 * `npm run bench:api` — the read API under load (issue 4 item 6, issue 6).
 *
 * Seeds a database with 100,000 transactions (400,000 tracked-token transfers: two per transaction of DEMO,
 * USDC, WETH or RWD, and two of XPT, the export's token; about 500,000 logs) whose DEMO token has 50,000 holders, through the store's own write path (`commitBatch`), checks that the
 * counters the triggers keep match the generator's account, starts the API (`buildApp`, listening on
 * 127.0.0.1) in this process with a stand-in JSON-RPC node in a child process, and measures each endpoint
 * with autocannon (50 connections, 10 s after a 2 s warm-up, `Accept-Encoding: gzip, deflate` as real clients
 * send; none with `--identity`) run from another child process. A bare `node:http` server and a bare Fastify
 * route, each sending a real transaction's and a real page's bytes (gzipped as the API gzips them), served by
 * this process too, give the socket's and the framework's ceilings; an endpoint judged as a share of the
 * socket's has that ceiling measured again right before it in every round. Prints req/s, p50/p99, the
 * shares of both ceilings and PASS/MISS per target; then streams the CSV export of XPT's transfers once
 * (rows/s, the server's peak RSS). See docs/performance.md.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { Session } from "node:inspector/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import Fastify from "fastify";
import { acceptsGzip } from "../src/api/acceptEncoding.ts";
import { buildApp } from "../src/api/buildApp.ts";
import { COMPRESS_MIN_BYTES, GZIP_LEVEL } from "../src/api/cache/cachedBody.ts";
import { createChainClient } from "../src/chain/createChainClient.ts";
import { createLocalBroadcaster } from "../src/ingest/broadcaster.ts";
import type { Common } from "../src/internal/common.ts";
import { errorMessage } from "../src/internal/errors.ts";
import { createLogger } from "../src/internal/logger.ts";
import { createMetrics } from "../src/internal/metrics.ts";
import { createShutdown } from "../src/internal/shutdown.ts";
import { setHeapWork, tuneV8 } from "../src/internal/tuneV8.ts";
import { createPriceHistory } from "../src/prices/createPriceHistory.ts";
import { createTransactionValuer } from "../src/prices/transactionValues.ts";
import { createTimeSeries } from "../src/stats/createTimeSeries.ts";
import { listenForChanges } from "../src/store/changeNotices.ts";
import { maintainTables } from "../src/store/maintainTables.ts";
import { eventLoopCpuMicros } from "./_shared/eventLoopCpu.ts";
import { runBench } from "./_shared/runBench.ts";
import { parseApiBenchArgs } from "./api/apiBenchArgs.ts";
import { apiBenchConfig, apiBenchConfigFile, BENCH_CONTRACTS, BENCH_TOKENS } from "./api/apiBenchConfig.ts";
import { formatTable, judge, type Measured, medianOfRounds, type ServerResult } from "./api/apiReport.ts";
import { type BenchDatabase, openBenchDatabase } from "./api/benchDatabase.ts";
import { caughtUpIndexer } from "./api/caughtUpIndexer.ts";
import { type Child, runningChildren, startChild } from "./api/children.ts";
import { createDataset } from "./api/dataset.ts";
import { apiEndpoints, ceilingEndpoints, type Endpoint } from "./api/endpoints.ts";
import { measureExportOnReplica } from "./api/exportOnReplica.ts";
import type { LoadRequest, LoadResult } from "./api/loadWorker.ts";
import { type ExportMeasure, measureExport } from "./api/measureExport.ts";
import type { StandInSetup } from "./api/rpcStandIn.ts";
import { seedDatabase, verifySeed } from "./api/seed.ts";

/**
 * Issue 20: the 200,000-row export streams with the server's peak RSS under 300 MB. The in-process server
 * shares its process with the seeded database (memory:// by default), so there what is judged is the RSS the
 * export adds; on PostgreSQL the export is also asked of a separate `protoscan start --role api` process,
 * whose peak RSS is judged whole (exportOnReplica.ts).
 */
const EXPORT_RSS_TARGET_MB = 300;

// The server runs with the V8 settings `protoscan start` runs with.
tuneV8();

const cleanups: (() => Promise<unknown>)[] = [];
const out = (line: string) => process.stdout.write(`${line}\n`);

async function cleanup(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined);
  for (const child of runningChildren()) await child.stop();
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

/** The bytes of a path's uncompressed body (asked without Accept-Encoding); throws on anything but 200. */
async function bodyBytes(origin: string, path: string): Promise<number> {
  const response = await fetch(`${origin}${path}`, { headers: { "accept-encoding": "identity" } });
  const bytes = (await response.arrayBuffer()).byteLength;
  if (response.status !== 200 || response.headers.has("content-encoding")) {
    throw new Error(`GET ${path} (identity): ${response.status} ${response.headers.get("content-encoding")}`);
  }
  return bytes;
}

/**
 * What a client sends by default: undici (Node's fetch), browsers, curl --compressed and Python requests all
 * ask for gzip. `--identity` sends none.
 */
const CLIENT_ACCEPT_ENCODING = "gzip, deflate";

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
  // History as `protoscan start` serves it: the writer values bucket volumes in the background after its
  // commits (stats/createHistoryValuer.ts); here, once, after the seeding's commits, timed.
  // The change notices, heard as `protoscan start` hears them: the API's caches and the price history's spans.
  const changes = await listenForChanges(bench.database, { logger: common.logger });
  cleanups.push(() => changes.close());
  const history = createPriceHistory(common, { db, chain, changes });
  const timeSeries = createTimeSeries(common, {
    db,
    prices: history,
    valueTransactions: createTransactionValuer(config, history),
  });
  const valuationStarted = performance.now();
  let bucketsValued = 0;
  for (let n = await timeSeries.valueStale(); n > 0; n = await timeSeries.valueStale()) bucketsValued += n;
  out(
    `background valuation of history volumes (the writer's, after the seeding's commits): ${bucketsValued} buckets in ${((performance.now() - valuationStarted) / 1000).toFixed(1)} s`,
  );
  // Seeded and valued: from here the process is what `protoscan start` is once caught up, a server.
  setHeapWork("serving");
  const app = await buildApp(common, {
    database: bench.database,
    chain,
    events,
    history,
    timeSeries,
    changes,
    ...(indexer ? { indexer } : {}),
  });
  cleanups.push(() => app.close());
  const origin = await app.listen({ host: "127.0.0.1", port: 0 });

  // Inputs: 5,000 hashes spread over the whole history (their bodies fit the tx cache's 16 MiB), the busiest
  // user's page 10, the 1,000 busiest users, and 1,000 hours of history up to now (the dataset's newest block
  // is now).
  const historyTo = Math.floor(Date.now() / 1000);
  const hashes = e.hashes().filter((_, i) => i % 20 === 7);
  const busiest = e.busiest(1000, new Set(dataset.users));
  const top = busiest[0]!;
  const endpoints = apiEndpoints({
    hashes,
    coldHashes: e.hashes(),
    addresses: busiest.map((b) => b.address),
    addressPage: await cursorPagePath(origin, top.address, 10),
    historyRange: { from: historyTo - 999 * 3600, to: historyTo },
    busiest: top.address,
  });

  // The ceilings: the same process sending a real response's bytes, serialized and encoded once (a Buffer, as
  // the API's cached bodies are), with the same Content-Type: from a bare `node:http` server (the socket's
  // ceiling, what the targets are judged against) and from a bare Fastify (no plugins, no schemas). Like the
  // API, they send a body of COMPRESS_MIN_BYTES or more gzipped (compressed once, here) to a request that
  // accepts gzip, so that a compressed answer is compared with a compressed ceiling.
  const ceilingBody = (body: Buffer) => ({
    identity: body,
    gzip: body.length >= COMPRESS_MIN_BYTES ? gzipSync(body, { level: GZIP_LEVEL }) : null,
  });
  const bodies = new Map([
    ["/ceiling/tx", ceilingBody(Buffer.from(JSON.stringify(await getJson(origin, `/api/tx/${hashes[0]}`))))],
    [
      "/ceiling/page",
      ceilingBody(Buffer.from(JSON.stringify(await getJson(origin, "/api/transactions/recent")))),
    ],
  ]);
  const json = "application/json; charset=utf-8";
  /** The bytes and headers of a ceiling's answer to a request with this `Accept-Encoding`. */
  const ceilingAnswer = (
    body: { identity: Buffer; gzip: Buffer | null },
    acceptEncoding: string | undefined,
  ) => {
    if (!body.gzip) return { bytes: body.identity, headers: { "content-type": json } };
    const headers = { "content-type": json, vary: "Accept-Encoding" };
    return acceptsGzip(acceptEncoding)
      ? { bytes: body.gzip, headers: { ...headers, "content-encoding": "gzip" } }
      : { bytes: body.identity, headers };
  };
  const nodeServer = createServer((request, response) => {
    const body = bodies.get(request.url ?? "");
    if (!body) {
      response.writeHead(404).end();
      return;
    }
    const { bytes, headers } = ceilingAnswer(body, request.headers["accept-encoding"]);
    response.writeHead(200, { ...headers, "content-length": bytes.length }).end(bytes);
  });
  await new Promise<void>((resolve) => nodeServer.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => nodeServer.close(resolve)));
  const nodeAddress = nodeServer.address();
  const nodeOrigin = `http://127.0.0.1:${typeof nodeAddress === "object" && nodeAddress ? nodeAddress.port : 0}`;
  const ceilingApp = Fastify({ logger: false });
  for (const [path, body] of bodies) {
    ceilingApp.get(path, (request, reply) => {
      const { bytes, headers } = ceilingAnswer(body, request.headers["accept-encoding"]);
      return reply.headers(headers).send(bytes);
    });
  }
  cleanups.push(() => ceilingApp.close());
  const ceilingOrigin = await ceilingApp.listen({ host: "127.0.0.1", port: 0 });

  const selected = endpoints.filter((ep) => !args.only || args.only.some((k) => ep.key.includes(k)));
  // The uncompressed body of each endpoint's first path (the table's "body" bytes).
  const uncompressed = new Map<string, number>();
  for (const ep of ceilingEndpoints()) uncompressed.set(ep.key, bodies.get(ep.paths[0]!)!.identity.length);
  for (const ep of selected) {
    // Every URL answers 200 before we measure; a history URL's first answer values its buckets (timed).
    const paths = ep.key.endsWith("History") ? ep.paths : [ep.paths[0]!];
    for (const path of paths) {
      const started = performance.now();
      // A cold history answer past the server's 60 s idle-socket timeout (a busy machine) loses its socket while
      // the server goes on valuing and keeping the buckets: asked once more, it finishes from what was kept.
      await getJson(origin, path).catch((error: unknown) => {
        if (!ep.key.endsWith("History")) throw error;
        out(`  first answer of ${path.split("?")[0]} failed (${errorMessage(error)}); asking again`);
        return getJson(origin, path);
      });
      if (ep.key.endsWith("History")) {
        out(
          `  first (cold) answer of ${path.split("?")[0]}: ${((performance.now() - started) / 1000).toFixed(2)} s`,
        );
      }
    }
  }

  for (const ep of selected) uncompressed.set(ep.key, await bodyBytes(origin, ep.paths[0]!));

  const load = startChild("./loadWorker.ts");
  await load.next();
  out(
    `\nload: autocannon in a child process (pid ${load.pid}), ${args.connections} connections, ` +
      `${args.warmupSeconds} s warm-up + ${args.seconds} s per endpoint, ${args.rounds} round(s); server: this process (pid ${process.pid}); ` +
      (args.identity ? "no Accept-Encoding (--identity)" : `Accept-Encoding: ${CLIENT_ACCEPT_ENCODING}`),
  );
  const rounds: Measured[][] = [];
  /** per endpoint with a paired ceiling, its req/s over that ceiling's measured right before it, by round */
  const paired = new Map<string, number[]>();
  let id = 0;
  /** Load one endpoint; `pairedFor`: a ceiling measured again for a ratio, kept out of the table's rows. */
  const measure = async (endpoint: Endpoint, at: string, pairedFor?: string): Promise<ServerResult> => {
    const request: LoadRequest = {
      id: ++id,
      origin: at,
      paths: endpoint.paths,
      connections: args.connections,
      seconds: args.seconds,
      warmupSeconds: args.warmupSeconds,
      warmupRequests: endpoint.warmFullRotation ? endpoint.paths.length : 0,
      ...(args.identity ? {} : { acceptEncoding: CLIENT_ACCEPT_ENCODING }),
    };
    const profiler = args.profileDir ? await startProfiler() : null;
    // The server's CPU time (this process, every thread) per measured request, warm-up excluded: unlike
    // req/s, it does not depend on whether the load generator or the server is the one short of a core.
    const first = await load.ask<{ measuring?: true } & LoadResult & { error?: string }>(request);
    const cpuBefore = process.cpuUsage();
    const loopBefore = eventLoopCpuMicros();
    const answer = first.measuring ? await load.next<LoadResult & { error?: string }>() : first;
    const cpu = process.cpuUsage(cpuBefore);
    const loopAfter = eventLoopCpuMicros();
    const result: ServerResult = {
      ...answer,
      cpuMicrosPerRequest: answer.requests > 0 ? (cpu.user + cpu.system) / answer.requests : 0,
      eventLoopMicrosPerRequest:
        loopBefore !== null && loopAfter !== null && answer.requests > 0
          ? (loopAfter - loopBefore) / answer.requests
          : null,
      bodyBytes: uncompressed.get(endpoint.key) ?? 0,
    };
    if (profiler && args.profileDir) {
      const file = join(args.profileDir, `${endpoint.key}${pairedFor ? "-paired" : ""}.cpuprofile`);
      await mkdir(args.profileDir, { recursive: true });
      await writeFile(file, JSON.stringify(await profiler.stop()));
    }
    if (answer.error) throw new Error(`autocannon failed on ${endpoint.label}: ${answer.error}`);
    if (pairedFor === undefined) rounds.at(-1)!.push({ endpoint, result });
    // The other threads: PGlite's worker (on PGlite), V8's collector threads, libuv's pool.
    const loop = result.eventLoopMicrosPerRequest;
    const split =
      loop == null
        ? ""
        : ` (event loop ${loop.toFixed(0)}, other threads ${(result.cpuMicrosPerRequest - loop).toFixed(0)})`;
    out(
      `  ${endpoint.label}${pairedFor ? `, ${pairedFor}` : ""}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ` +
        `server CPU ${result.cpuMicrosPerRequest.toFixed(1)} µs/request${split}`,
    );
    return result;
  };
  // Each round measures the ceilings, then the endpoints: figures are the median of the rounds, so a burst of
  // load from elsewhere on the machine during one measurement does not decide a ratio. An endpoint judged as a
  // share of a ceiling has that ceiling measured again right before it (`pairedCeiling`): this machine's speed
  // was seen to drift 1.7x between rounds a minute apart (docs/performance.md).
  for (let round = 1; round <= args.rounds; round++) {
    if (args.rounds > 1) out(` round ${round} of ${args.rounds}`);
    rounds.push([]);
    for (const ep of ceilingEndpoints())
      await measure(ep, ep.ceiling === "node" ? nodeOrigin : ceilingOrigin);
    for (const ep of selected) {
      const pairedWith = ceilingEndpoints().find((c) => c.key === ep.pairedCeiling);
      if (!pairedWith) {
        await measure(ep, origin);
        continue;
      }
      const ceiling = await measure(pairedWith, nodeOrigin, `beside ${ep.label}`);
      const measured = await measure(ep, origin);
      const ratios = paired.get(ep.key) ?? [];
      ratios.push(measured.requestsPerSecond / ceiling.requestsPerSecond);
      paired.set(ep.key, ratios);
    }
  }

  // The CSV export of XPT's transfers (SPEC §10.4; 200,000 rows on the default dataset): one request,
  // streamed, timed, RSS sampled.
  let exported: ExportMeasure | null = null;
  let exportedOnReplica: ExportMeasure | null = null;
  if (!args.only || args.only.some((k) => "export".includes(k))) {
    const path = `/api/tokens/${BENCH_TOKENS.XPT.address}/events.csv`;
    exported = await measureExport(origin, path);
    const growth = exported.peakRssMb - exported.rssBeforeMb;
    out(
      `  CSV export of XPT's transfers: ${exported.rows} rows, ${(exported.bytes / 2 ** 20).toFixed(1)} MiB in ` +
        `${exported.seconds.toFixed(2)} s (${exported.rowsPerSecond.toFixed(0)} rows/s); server RSS ` +
        `${exported.rssBeforeMb.toFixed(0)} MB before, peak ${exported.peakRssMb.toFixed(0)} MB: +${growth.toFixed(0)} MB ` +
        `while streaming (${growth <= EXPORT_RSS_TARGET_MB ? "PASS" : "MISS"} <= ${EXPORT_RSS_TARGET_MB} MB; the ` +
        "server's RSS before holds the seeded database, in this process)",
    );
    // On PostgreSQL, the same request to a server of its own, as a user runs one: its peak is the target.
    if (bench.url) {
      exportedOnReplica = await measureExportOnReplica({
        databaseUrl: bench.url,
        configFile: apiBenchConfigFile(`http://127.0.0.1:${rpcPort}`),
        path,
      });
      const r = exportedOnReplica;
      out(
        `  the same export from a separate \`protoscan start --role api\` process: ${r.rows} rows in ${r.seconds.toFixed(2)} s ` +
          `(${r.rowsPerSecond.toFixed(0)} rows/s); its RSS ${r.rssBeforeMb.toFixed(0)} MB before, peak ${r.peakRssMb.toFixed(0)} MB ` +
          `(${r.peakRssMb <= EXPORT_RSS_TARGET_MB ? "PASS" : "MISS"} <= ${EXPORT_RSS_TARGET_MB} MB)`,
      );
    }
  }

  const verdicts = judge(medianOfRounds(rounds), paired);
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
          export: exported,
          exportOnReplica: exportedOnReplica,
          results: verdicts.map((v) => ({
            key: v.measured.endpoint.key,
            label: v.measured.endpoint.label,
            ...v.measured.result,
            ratio: v.ratio,
            pairedRatios: v.pairedRatios,
            fastifyRatio: v.fastifyRatio,
            cpuRatio: v.cpuRatio,
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

await runBench("api", main, { cleanup });
