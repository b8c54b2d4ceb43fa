import { rmSync } from "node:fs";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inArray } from "drizzle-orm";
import { createPublicClient, type Hex, http, type PublicClient } from "viem";
import { resolveConfig } from "../../src/config/resolveConfig.ts";
import type { ConfigFile } from "../../src/config/schema.ts";
import { startAnvil } from "../../src/demo/anvil.ts";
import { createJsonRpc } from "../../src/demo/demoClient.ts";
import { demoConfigFile, writeDemoConfig } from "../../src/demo/demoConfig.ts";
import { deployDemo } from "../../src/demo/deploy.ts";
import { createSilentLogger } from "../../src/internal/logger.ts";
import { createDatabase, type Database } from "../../src/store/createDatabase.ts";
import { getDeliveries } from "../../src/store/inbox.ts";
import { migrate } from "../../src/store/migrate.ts";
import { blocks, indexerCursor, transactions } from "../../src/store/schema.ts";
import { seededRandom } from "../helpers/faultsRandom.ts";
import { startRpcProxy } from "../helpers/rpcProxy.ts";
import { createServerDatabase, type ServerDatabase, sleep, viaPort } from "../helpers/scaleout.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcpProxy.ts";
import { verifyStoreAgainstChain } from "../helpers/verifyStore.ts";
import { disperseTx, mineTxs, randomReorg, randomTx, type TxClass } from "./chainActions.ts";
import { ALCHEMY_KEY, buildDelivery, type Delivery, postDelivery, QN_TOKEN } from "./deliveries.ts";
import { type ArmedFault, drawRpcFault, type RpcFaultKind } from "./rpcFaults.ts";
import { createWriter, type Writer } from "./writer.ts";

export type FaultDatabase = "pglite" | "postgres";

export type SeedOptions = {
  seed: number;
  database: FaultDatabase;
  /** transactions to mine over the run (reorg replacements not counted) */
  transactions: number;
  /** the PostgreSQL server (`postgres://…`) a fresh database is created on, for `postgres` */
  serverUrl?: string;
  /** also serve self-contradicting RPC answers (FAULT_INCONSISTENT) */
  inconsistent: boolean;
};

export type SeedReport = {
  seed: number;
  database: FaultDatabase;
  /** mined by the simulation; dropped = orphaned by a reorg and not mined again */
  transactions: { sent: number; dropped: number; stored: number };
  faults: Record<string, number>;
  restarts: number;
  unexpectedExits: number;
  /** per unexpected exit: code or signal, and the writer's last error or warning */
  exitReasons: string[];
  databaseRestarts: number;
  reorgs: number[];
  webhooks: { deliveries: number; posts: number; acknowledged: number };
  trackTx: { posts: number; byStatus: Record<string, number> };
  mismatches: string[];
  durationMs: number;
  /** where the time went: setup (chain, store, first start), storm, settle (catch up, inbox), verify */
  phasesMs: { setup: number; storm: number; settle: number; verify: number };
  /** PGlite: writer restarts the end needed before every delivery was done (processed after a restart) */
  inboxRounds: number;
  /** what the schedule did, with seconds since the start (printed when the seed fails) */
  timeline: string[];
};

/** Webhooks announce transactions this deep or deeper: a reorg (at most 10 blocks) never takes them back. */
const WEBHOOK_DEPTH = 11;
const MAX_REORG_DEPTH = 10;

/**
 * One seeded run: a fresh anvil with the demo protocols, a JSON-RPC fault proxy in front of it, a fresh store
 * (a PGlite directory, or a PostgreSQL database behind a TCP proxy that can be cut), and the real `protoscan
 * start` process. A schedule drawn from `seed` mines blocks of random demo transactions and, between them,
 * arms RPC faults, reorganizes the chain, SIGKILLs the writer, cuts the database, posts signed webhook
 * deliveries (duplicated and reordered) and floods POST /api/track-tx. Then the faults stop, protoscan
 * catches up, and the store is compared with the chain; every acknowledged delivery must be done, and no request
 * may have been answered 500 (a 503 while the database or the node is away is expected).
 */
export async function runSeed(options: SeedOptions): Promise<SeedReport> {
  const startedAt = Date.now();
  const { seed, database } = options;
  const random = seededRandom(seed);
  const cleanups: (() => Promise<unknown>)[] = [];
  const tmp = await mkdtemp(join(tmpdir(), `protoscan-faults-${seed}-`));
  cleanups.push(() => rm(tmp, { recursive: true, force: true }));
  const report: SeedReport = {
    seed,
    database,
    transactions: { sent: 0, dropped: 0, stored: 0 },
    faults: {},
    restarts: 0,
    unexpectedExits: 0,
    exitReasons: [],
    databaseRestarts: 0,
    reorgs: [],
    webhooks: { deliveries: 0, posts: 0, acknowledged: 0 },
    trackTx: { posts: 0, byStatus: {} },
    mismatches: [],
    durationMs: 0,
    phasesMs: { setup: 0, storm: 0, settle: 0, verify: 0 },
    inboxRounds: 0,
    timeline: [],
  };
  const note = (text: string) => {
    report.timeline.push(`${((Date.now() - startedAt) / 1000).toFixed(1)}s ${text}`);
  };
  let phaseStart = startedAt;
  const phase = (name: keyof SeedReport["phasesMs"]) => {
    const now = Date.now();
    report.phasesMs[name] = now - phaseStart;
    phaseStart = now;
  };
  const problems = report.mismatches;
  let writer: Writer | undefined;
  try {
    const anvil = await startAnvil();
    cleanups.push(() => anvil.stop());
    const d = await deployDemo({ rpcUrl: anvil.url });
    const chain = createPublicClient({ transport: http(anvil.url, { retryCount: 0 }) }) as PublicClient;
    const rpc = createJsonRpc(anvil.url);
    const headNow = async () => Number(await chain.getBlockNumber({ cacheTime: 0 }));
    // Reorgs never reach below the first simulated block: the deployment stays.
    const floor = await headNow();

    const proxy = await startRpcProxy({ upstream: anvil.url });
    cleanups.push(() => proxy.close());
    const base = demoConfigFile(d, { rpcUrl: proxy.url, pollIntervalSeconds: 1 });
    const file: ConfigFile = {
      ...base,
      // Short timeouts: a `timeout` fault costs two seconds, not ten.
      rpc: { ...base.rpc, timeoutMs: 2_000 },
      indexer: {
        ...base.indexer,
        logChunkBlocks: random.int(2, 12),
        confirmations: 0,
        pollIntervalSeconds: 1,
      },
      api: { ...base.api, rateLimitPerMinute: 1_000_000 },
      webhooks: { alchemy: { signingKeys: [ALCHEMY_KEY] }, quicknode: { securityTokens: [QN_TOKEN] } },
    };
    const config = resolveConfig(file, null);
    const configPath = join(tmp, "protoscan.yaml");
    await writeDemoConfig(configPath, file);

    let tcp: TcpProxy | undefined;
    let server: ServerDatabase | undefined;
    const env: Record<string, string> = { PROTOSCAN_CONFIG: configPath };
    if (database === "postgres") {
      if (!options.serverUrl) throw new Error("postgres needs a server URL");
      const created = await createServerDatabase(options.serverUrl);
      server = created;
      cleanups.push(() => created.drop());
      const target = new URL(created.url);
      const proxyTcp = await startTcpProxy(Number(target.port || 5432), target.hostname);
      tcp = proxyTcp;
      cleanups.push(() => proxyTcp.close());
      env.DATABASE_URL = viaPort(created.url, proxyTcp.port);
    } else {
      env.DATA_DIR = join(tmp, "data");
      await cp(await migratedPgliteDir(), env.DATA_DIR, { recursive: true });
    }
    const w = createWriter(env);
    writer = w;
    cleanups.push(() => w.close());
    w.start();
    await w.url();
    phase("setup");

    // What the simulation knows about the chain: class of every transaction it mined and still on chain.
    const classes = new Map<string, TxClass>();
    const ofClass = (c: TxClass) => [...classes].filter(([, k]) => k === c).map(([h]) => h);
    const armed: ArmedFault[] = [];
    const served: Partial<Record<RpcFaultKind, number>> = {};
    /** side transactions protoscan answered 200 for (track-tx), or whose outcome is unknown yet */
    const sideStored = new Set<string>();
    const sideUnknown = new Set<string>();
    const awaitingWebhook: { hash: Hex; block: number }[] = [];
    const deliveries: Delivery[] = [];
    const acked = new Set<Delivery>();
    const webhookStatuses: Record<string, number> = {};

    const post = async (delivery: Delivery) => {
      report.webhooks.posts++;
      const status = await postDelivery(await w.url(), delivery);
      webhookStatuses[status] = (webhookStatuses[status] ?? 0) + 1;
      if (status === 200) acked.add(delivery);
      else if (status !== 0 && status !== 503)
        problems.push(`webhook ${delivery.provider} ${delivery.id}: HTTP ${status}`);
    };

    /** Announce the transactions buried deep enough (all with `force`), duplicated and reordered. */
    const deliverDue = async (force: boolean) => {
      const head = await headNow();
      const due = awaitingWebhook.filter((t) => force || head - t.block >= WEBHOOK_DEPTH);
      if (due.length === 0) return;
      for (const t of due) awaitingWebhook.splice(awaitingWebhook.indexOf(t), 1);
      const fresh: Delivery[] = [];
      for (let i = 0; i < due.length; ) {
        const n = random.int(1, 3);
        fresh.push(
          await buildDelivery(
            random,
            anvil.url,
            due.slice(i, i + n).map((t) => t.hash),
            deliveries.length + fresh.length,
          ),
        );
        i += n;
      }
      deliveries.push(...fresh);
      note(
        `webhooks: ${fresh.map((f) => `${f.provider}:${f.id}[${f.hashes.map((h) => h.slice(0, 10)).join(" ")}]`).join(" ")}`,
      );
      report.webhooks.deliveries += fresh.length;
      // Every delivery 1-3 times, plus now and then an old one again, all in a shuffled order.
      const posts = fresh.flatMap((delivery) => Array.from({ length: random.int(1, 3) }, () => delivery));
      if (deliveries.length > fresh.length && random.chance(0.5)) posts.push(random.pick(deliveries));
      await Promise.all(
        random.shuffle(posts).map(async (delivery, i) => {
          await sleep(i * 5);
          await post(delivery);
        }),
      );
    };

    const trackFlood = async () => {
      const url = await w.url();
      type Shot = { hash: string; class: TxClass | "unknown" };
      const shots: Shot[] = [];
      const n = random.int(10, 40);
      for (let i = 0; i < n; i++) {
        const kind = random.weighted({
          scanned: 4,
          side: 1,
          irrelevant: 2,
          unknown: 1,
          again: shots.length > 0 ? 2 : 0,
        });
        if (kind === "again") shots.push(random.pick(shots));
        else if (kind === "unknown") shots.push({ hash: random.hash(), class: "unknown" });
        else {
          const candidates = ofClass(kind);
          if (candidates.length > 0) shots.push({ hash: random.pick(candidates), class: kind });
        }
      }
      const outcomes = await Promise.all(
        shots.map(async (shot) => ({ shot, status: await trackTx(url, shot.hash) })),
      );
      note(
        `track-tx flood: ${outcomes.map(({ shot, status }) => `${shot.hash.slice(0, 10)}(${shot.class})=${status}`).join(" ")}`,
      );
      for (const { shot, status } of outcomes) {
        report.trackTx.posts++;
        const key = `${shot.class} ${status}`;
        report.trackTx.byStatus[key] = (report.trackTx.byStatus[key] ?? 0) + 1;
        const allowed: Record<Shot["class"], number[]> = {
          scanned: [200, 202],
          side: [200, 202],
          irrelevant: [422, 202],
          unknown: [202],
        };
        if (status !== 0 && status !== 503 && !allowed[shot.class].includes(status)) {
          problems.push(`track-tx ${shot.class} ${shot.hash}: HTTP ${status}`);
        }
        if (shot.class === "side") {
          if (status === 200) {
            sideStored.add(shot.hash);
            sideUnknown.delete(shot.hash);
          } else if (!sideStored.has(shot.hash) && (status === 0 || status === 503))
            sideUnknown.add(shot.hash);
        }
      }
    };

    const caps = {
      kills: random.int(1, 3),
      databaseRestarts: database === "postgres" ? random.int(1, 3) : 0,
      reorgs: random.int(2, 5),
    };
    while (report.transactions.sent < options.transactions) {
      const action = random.weighted({
        block: 6,
        fault: 4,
        webhook: 1.5,
        track: 1.2,
        pause: 2,
        reorg: report.reorgs.length < caps.reorgs ? 1 : 0,
        kill: report.restarts < caps.kills ? 0.7 : 0,
        database: report.databaseRestarts < caps.databaseRestarts ? 0.7 : 0,
      });
      switch (action) {
        case "block": {
          const planned = Array.from({ length: random.int(1, 8) }, () => randomTx(random, d));
          const mined = await mineTxs(
            anvil.url,
            planned.map((p) => p.tx),
          );
          for (const [i, hash] of mined.hashes.entries()) classes.set(hash, planned[i]!.class);
          report.transactions.sent += planned.length;
          note(
            `block ${mined.block}: ${planned.map((p, i) => `${mined.hashes[i]!.slice(0, 10)}(${p.class})`).join(" ")}`,
          );
          await deliverDue(false);
          break;
        }
        case "webhook": {
          const planned = Array.from({ length: random.int(1, 3) }, () => disperseTx(random, d));
          const mined = await mineTxs(
            anvil.url,
            planned.map((p) => p.tx),
          );
          for (const hash of mined.hashes) {
            classes.set(hash, "side");
            awaitingWebhook.push({ hash, block: mined.block });
          }
          note(`block ${mined.block}: disperse ${mined.hashes.map((h) => h.slice(0, 10)).join(" ")}`);
          report.transactions.sent += planned.length;
          await deliverDue(false);
          break;
        }
        case "fault": {
          const fault = drawRpcFault(random, {
            inconsistent: options.inconsistent,
            served: (kind) => {
              served[kind] = (served[kind] ?? 0) + 1;
            },
            otherHash: (not) => ofClass("scanned").find((h) => h !== not.toLowerCase()),
          });
          armed.push(fault);
          proxy.inject(fault.fault);
          note(`arm ${fault.kind} on ${fault.fault.method ?? "any method"} x${fault.fault.times ?? "∞"}`);
          break;
        }
        case "reorg": {
          const head = await headNow();
          const deepest = Math.min(MAX_REORG_DEPTH, head - floor);
          if (deepest < 1) break;
          const outcome = await randomReorg(random, anvil.url, d, random.int(1, deepest), (h) =>
            classes.get(h),
          );
          for (const hash of outcome.dropped) {
            classes.delete(hash);
            sideUnknown.delete(hash);
            const waiting = awaitingWebhook.findIndex((t) => t.hash === hash);
            if (waiting >= 0) awaitingWebhook.splice(waiting, 1);
          }
          for (const added of outcome.added) classes.set(added.hash, added.class);
          report.transactions.dropped += outcome.dropped.length;
          report.reorgs.push(outcome.depth);
          note(
            `reorg depth ${outcome.depth} at head ${head}: dropped ${outcome.dropped.map((h) => h.slice(0, 10)).join(" ") || "-"}; replayed ${outcome.replayed.length}; new ${outcome.added.map((a) => a.hash.slice(0, 10)).join(" ") || "-"}`,
          );
          break;
        }
        case "kill":
          note(`SIGKILL pid ${w.pid}`);
          await w.kill(random.int(0, 1000));
          report.restarts++;
          break;
        case "database":
          note("database cut");
          tcp!.cut();
          await sleep(random.int(300, 3000));
          tcp!.restore();
          note("database back");
          report.databaseRestarts++;
          break;
        case "track":
          await trackFlood();
          break;
        case "pause":
          await sleep(random.int(100, 1500));
          break;
      }
    }

    // The storm is over: no new faults, and the providers deliver what is still owed.
    phase("storm");
    note("storm over");
    proxy.clearFaults();
    tcp?.restore();
    await rpc("anvil_mine", [`0x${WEBHOOK_DEPTH.toString(16)}`]);
    await deliverDue(true);
    const deadline = Date.now() + 120_000;
    for (;;) {
      const unacked = deliveries.filter((x) => !acked.has(x));
      if (unacked.length === 0) break;
      if (Date.now() > deadline) throw new Error(`${unacked.length} webhook deliveries never acknowledged`);
      for (const delivery of unacked) await post(delivery);
      if (unacked.some((x) => !acked.has(x))) await sleep(1000);
    }
    // Side transactions whose track-tx got no answer may be stored or not: ask again until it is certain.
    for (const hash of sideUnknown) {
      for (;;) {
        const status = await trackTx(await w.url(), hash);
        if (status === 200) {
          sideStored.add(hash);
          break;
        }
        if (Date.now() > deadline) throw new Error(`track-tx ${hash}: still HTTP ${status}`);
        await sleep(500);
      }
    }

    const head = await headNow();
    await waitCaughtUp(w, head, 180_000);
    /** Wait until the API shows each of `hashes`, at most 120 s for all of them. */
    const untilShown = async (hashes: Iterable<string>) => {
      const deadline = Date.now() + 120_000;
      for (const hash of hashes) {
        while (Date.now() < deadline && !(await isStored(await w.url(), hash))) await sleep(250);
      }
    };
    // A transaction only track-tx stored (polling does not scan it) that a reorg rollback removed with its
    // still-canonical block is stored again by the track watcher (docs/reliability.md): wait until the API shows
    // each one the chain still has, as it shows every announced one below, before the store is read. (One a
    // reorg dropped from the chain is expected nowhere.)
    const canonical: string[] = [];
    for (const hash of sideStored) {
      const mined = await chain.getTransactionReceipt({ hash: hash as Hex }).then(
        () => true,
        () => false,
      );
      if (mined) canonical.push(hash);
    }
    await untilShown(canonical);
    let store: Database;
    if (server) {
      store = await createDatabase({ databaseUrl: server.url, logger: createSilentLogger(), poolSize: 2 });
      cleanups.push(() => store.close());
      const inboxDeadline = Date.now() + 120_000;
      while ((await getDeliveries(store.db)).some((r) => r.status === "pending")) {
        if (Date.now() > inboxDeadline) break;
        await sleep(250);
      }
      await w.stop();
    } else {
      // PGlite serves one process, so its inbox is read once it is stopped. First wait until the API shows
      // every announced transaction (a delivery claimed by a killed process waits for its 60 s lease).
      await untilShown(new Set([...acked].flatMap((x) => x.hashes.map((h) => h.toLowerCase()))));
      // Deliveries it had not finished are processed after a restart (SPEC §3.2): the next round checks.
      for (let round = 0; ; round++) {
        await w.stop();
        const opened = await createDatabase({ dataDir: env.DATA_DIR!, logger: createSilentLogger() });
        const pending = (await getDeliveries(opened.db)).filter((r) => r.status === "pending").length;
        report.inboxRounds = round;
        if (pending === 0 || round >= 3) {
          store = opened;
          cleanups.push(() => opened.close());
          break;
        }
        await opened.close();
        w.start();
        await waitCaughtUp(w, head, 120_000);
        await sleep(2000);
      }
    }

    phase("settle");
    const rows = await getDeliveries(store.db);
    const byId = new Map(rows.map((r) => [`${r.provider}:${r.deliveryId}`, r]));
    for (const delivery of acked) {
      const row = byId.get(`${delivery.provider}:${delivery.id}`);
      if (!row)
        problems.push(`acknowledged delivery ${delivery.provider}:${delivery.id} is not in the inbox`);
      else if (row.status !== "done") {
        problems.push(
          `acknowledged delivery ${delivery.provider}:${delivery.id} is ${row.status}: ${row.lastError}`,
        );
      }
    }
    // Faults may make a request fail for a while (503), never answer 500: that is a bug of protoscan's.
    for (const line of w.internalErrors()) problems.push(`a request was answered 500: ${line}`);
    const extraHashes = new Set<string>(sideStored);
    for (const delivery of acked) for (const hash of delivery.hashes) extraHashes.add(hash.toLowerCase());
    problems.push(
      ...(await verifyStoreAgainstChain({
        rpcUrl: anvil.url,
        db: store.db,
        config,
        fromBlock: config.indexer.startBlock,
        toBlock: head,
        extraHashes,
      })),
    );
    if (problems.length > 0) {
      // What the store holds for the transactions in question, and where the writer's logs are.
      const hashes = [...new Set(problems.join(" ").match(/0x[0-9a-f]{64}/g) ?? [])].slice(0, 10);
      const rows = await store.db
        .select({
          hash: transactions.hash,
          source: transactions.source,
          block: transactions.blockNumber,
          blockHash: transactions.blockHash,
          storedAt: transactions.storedAt,
        })
        .from(transactions)
        .where(inArray(transactions.hash, hashes));
      const numbers = [...new Set(rows.map((r) => r.block))];
      const headers =
        numbers.length > 0 ? await store.db.select().from(blocks).where(inArray(blocks.number, numbers)) : [];
      const cursor = await store.db.select().from(indexerCursor);
      const logPath = join(tmpdir(), `protoscan-faults-seed-${seed}-${database}.log`);
      await writeFile(logPath, w.logText());
      note(
        `stored rows: ${JSON.stringify(rows)}; their blocks: ${JSON.stringify(headers)}; cursor: ${JSON.stringify(cursor)}`,
      );
      note(`writer logs (every process): ${logPath}`);
    }
    report.transactions.stored = (
      await store.db.select({ hash: transactions.hash }).from(transactions)
    ).length;
    report.webhooks.acknowledged = acked.size;
    report.unexpectedExits = w.unexpectedExits;
    report.exitReasons = [...w.exitReasons];

    // Faults by kind: how many HTTP requests each was played on (rewrites: answers actually changed).
    for (const a of armed) {
      if (a.fault.kind === "rewrite" || a.fault.kind === "rewriteBody") continue;
      const requests = new Set(proxy.calls.filter((c) => c.fault === a.fault).map((c) => c.request)).size;
      if (requests > 0) report.faults[a.kind] = (report.faults[a.kind] ?? 0) + requests;
    }
    for (const [kind, n] of Object.entries(served)) report.faults[kind] = (report.faults[kind] ?? 0) + n;
    phase("verify");
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    problems.push(`the run failed: ${message}${writer ? `\n${writer.outputs()}` : ""}`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    report.durationMs = Date.now() - startedAt;
  }
  return report;
}

let pgliteTemplate: Promise<string> | undefined;
let pgliteTemplateRoot: string | undefined;

/**
 * A migrated PGlite data directory, made once per test file: each seed starts the writer on a copy of it
 * instead of running initdb (tens of seconds on a loaded machine; the interrupted creation of a data
 * directory is test/e2e/restart.test.ts's business).
 */
function migratedPgliteDir(): Promise<string> {
  pgliteTemplate ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), "protoscan-faults-template-"));
    pgliteTemplateRoot = dir;
    // Vitest may end its worker without an 'exit' event: removePgliteTemplate (afterAll) is the main way.
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const database = await createDatabase({ dataDir: join(dir, "data"), logger: createSilentLogger() });
    try {
      await migrate(database);
    } finally {
      await database.close();
    }
    return join(dir, "data");
  })();
  return pgliteTemplate;
}

/** Remove the template data directory of this test file, if one was made (40 MB per run otherwise). */
export async function removePgliteTemplate(): Promise<void> {
  const dir = pgliteTemplateRoot;
  if (dir === undefined) return;
  await pgliteTemplate?.catch(() => undefined);
  pgliteTemplate = undefined;
  pgliteTemplateRoot = undefined;
  await rm(dir, { recursive: true, force: true });
}

/** Whether GET /api/tx/:hash answers 200. */
async function isStored(apiUrl: string, hash: string): Promise<boolean> {
  try {
    const response = await fetch(`${apiUrl}/api/tx/${hash}`, { signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** POST /api/track-tx; the status, or 0 when the server did not answer. */
async function trackTx(apiUrl: string, hash: string): Promise<number> {
  try {
    const response = await fetch(`${apiUrl}/api/track-tx`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ txHash: hash }),
      signal: AbortSignal.timeout(15_000),
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/**
 * Wait until `head` is indexed and a cycle has ended since (the cycle that commits the last range reads
 * the balances of tokens not scanned in full after `indexedBlock` already shows the head).
 */
async function waitCaughtUp(writer: Writer, head: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let sawHeadAt: number | undefined;
  while (Date.now() < deadline) {
    const askedAt = Date.now();
    try {
      const response = await fetch(`${await writer.url()}/api/stats`, { signal: AbortSignal.timeout(5_000) });
      const body = (await response.json()) as { indexer?: { indexedBlock?: unknown; lastRunAt?: unknown } };
      const indexed = body.indexer?.indexedBlock;
      const lastRunAt =
        typeof body.indexer?.lastRunAt === "string" ? Date.parse(body.indexer.lastRunAt) : null;
      if (typeof indexed === "number" && indexed >= head) {
        sawHeadAt ??= askedAt;
        if (lastRunAt !== null && lastRunAt >= sawHeadAt) return;
      }
    } catch {
      // restarting, or the database is away: ask again
    }
    await sleep(200);
  }
  throw new Error(`the writer did not index block ${head} within ${timeoutMs} ms`);
}

/** One line per seed, the figures the issue asks for. */
export function formatReport(r: SeedReport): string {
  const faults = Object.entries(r.faults)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k}=${n}`)
    .join(", ");
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const total = Object.values(r.faults).reduce((s, n) => s + n, 0);
  return [
    `seed ${r.seed} [${r.database}]: ${r.transactions.sent} txs sent (${r.transactions.dropped} dropped by reorgs, ${r.transactions.stored} stored)`,
    `  faults ${total}: ${faults || "none"}`,
    `  restarts ${r.restarts} (SIGKILL) + ${r.unexpectedExits} unexpected exits, database restarts ${r.databaseRestarts}, reorgs ${r.reorgs.length} (depths ${r.reorgs.join(",") || "-"})`,
    ...r.exitReasons.map((reason) => `  unexpected exit: ${reason}`),
    `  webhooks: ${r.webhooks.deliveries} deliveries, ${r.webhooks.posts} posts, ${r.webhooks.acknowledged} acknowledged; track-tx: ${r.trackTx.posts} posts ${JSON.stringify(r.trackTx.byStatus)}`,
    `  mismatches ${r.mismatches.length}, ${s(r.durationMs)} (setup ${s(r.phasesMs.setup)}, storm ${s(r.phasesMs.storm)}, settle ${s(r.phasesMs.settle)}, verify ${s(r.phasesMs.verify)})${r.inboxRounds > 0 ? `, inbox done after ${r.inboxRounds} restart(s)` : ""}`,
    ...(r.mismatches.length > 0
      ? [
          "  first mismatches:",
          ...r.mismatches.slice(0, 10).map((m) => `    ${m.slice(0, 2000)}`),
          "  timeline:",
          ...r.timeline.map((t) => `    ${t}`),
        ]
      : []),
  ].join("\n");
}

/** Totals over the seeds of one database: the figures docs/reliability.md quotes. */
export function formatTotals(reports: readonly SeedReport[]): string {
  const sum = (f: (r: SeedReport) => number) => reports.reduce((s, r) => s + f(r), 0);
  const faults: Record<string, number> = {};
  for (const r of reports) for (const [k, n] of Object.entries(r.faults)) faults[k] = (faults[k] ?? 0) + n;
  const durations = reports.map((r) => r.durationMs / 1000);
  const depths = reports.flatMap((r) => r.reorgs);
  const failed = reports.filter((r) => r.mismatches.length > 0).map((r) => r.seed);
  return [
    `fault simulation totals [${reports[0]?.database}]: ${reports.length} seeds, ${failed.length} failed${failed.length > 0 ? ` (${failed.join(", ")})` : ""}`,
    `  transactions ${sum((r) => r.transactions.sent)} sent, ${sum((r) => r.transactions.dropped)} dropped by reorgs, ${sum((r) => r.transactions.stored)} stored`,
    `  faults ${sum((r) => Object.values(r.faults).reduce((s, n) => s + n, 0))}: ${Object.entries(faults)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k}=${n}`)
      .join(", ")}`,
    `  restarts ${sum((r) => r.restarts)} (SIGKILL) + ${sum((r) => r.unexpectedExits)} unexpected exits, database restarts ${sum((r) => r.databaseRestarts)}, reorgs ${depths.length}${depths.length > 0 ? ` (depth ${Math.min(...depths)}-${Math.max(...depths)})` : ""}`,
    `  webhooks ${sum((r) => r.webhooks.deliveries)} deliveries / ${sum((r) => r.webhooks.posts)} posts / ${sum((r) => r.webhooks.acknowledged)} acknowledged, track-tx ${sum((r) => r.trackTx.posts)} posts`,
    `  mismatches ${sum((r) => r.mismatches.length)}; per seed ${Math.min(...durations).toFixed(1)}-${Math.max(...durations).toFixed(1)} s, total ${sum((r) => r.durationMs / 1000).toFixed(1)} s`,
  ].join("\n");
}
