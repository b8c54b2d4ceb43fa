import { type ChildProcess, fork } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Hex } from "viem";
import { NonRetryableError } from "../../src/internal/errors.ts";
import { type BenchChain, protocolTx, sleep } from "../_shared/benchChain.ts";
import { cpuSeconds } from "../_shared/processCpu.ts";
import type { FanoutClientsResult, FanoutCommand, FanoutReply } from "./fanoutClients.ts";
import { type FanoutLatency, fanoutLatency } from "./fanoutLatency.ts";

const CLIENT_SCRIPT = fileURLToPath(new URL("./fanoutClients.ts", import.meta.url));

export type FanoutOptions = {
  clients: number;
  clientProcesses: number;
  /** protocol transactions sent per 1 s block */
  txPerBlock: number;
  warmupSeconds: number;
  measureSeconds: number;
};

export type FanoutRun = FanoutLatency & {
  /** the measured blocks: transactions of ours in each, (event, client) deliveries seen */
  blocks: { number: number; transactions: number; delivered: number }[];
  /** clients whose connection the server closed during the run */
  closedClients: number;
  /** CPU seconds per process over the measured window (protoscan, anvil, all client processes) */
  cpu: { protoscan: number; anvil: number; clients: number };
  windowSeconds: number;
};

type ClientProcess = { child: ChildProcess; request(command: FanoutCommand): Promise<FanoutReply> };

/** Fork one client process (tsx loader) speaking the IPC protocol of fanoutClients.ts. */
function forkClients(children: Set<ChildProcess>): ClientProcess {
  const child = fork(CLIENT_SCRIPT, [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return {
    child,
    request: (command) =>
      new Promise((resolve, reject) => {
        const onExit = (code: number | null) =>
          reject(new NonRetryableError(`a client process exited (${code})`));
        child.once("exit", onExit);
        child.once("message", (reply: FanoutReply) => {
          child.off("exit", onExit);
          if (reply.type === "failed") reject(new NonRetryableError(`client process: ${reply.error}`));
          else resolve(reply);
        });
        child.send(command);
      }),
  };
}

/**
 * Broadcast latency to many clients: `clients` WebSocket clients in `clientProcesses` child processes, all
 * subscribed to `transactions`, while `txPerBlock` protocol transactions are mined in every 1 s block (sent
 * in one JSON-RPC batch as each block appears). The first `warmupSeconds` are not measured. `children`
 * receives the forked processes so that the caller can kill them on an interrupt.
 */
export async function measureFanout(
  chain: BenchChain,
  target: { wsUrl: string; protoscanPid: number },
  options: FanoutOptions,
  work: string,
  children: Set<ChildProcess>,
  log: (line: string) => void,
): Promise<FanoutRun> {
  const procs = Array.from({ length: options.clientProcesses }, () => forkClients(children));
  const share = (i: number) =>
    Math.floor(options.clients / procs.length) + (i < options.clients % procs.length ? 1 : 0);
  const started = Date.now();
  await Promise.all(procs.map((p, i) => p.request({ cmd: "connect", url: target.wsUrl, clients: share(i) })));
  log(`${options.clients} clients subscribed in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const pids = () => ({
    protoscan: [target.protoscanPid],
    anvil: [chain.anvil.pid],
    clients: procs.map((p) => p.child.pid ?? -1),
  });
  let sent = 0;
  let head = await chain.blockNumber();
  const load = async (seconds: number): Promise<Hex[]> => {
    const hashes: Hex[] = [];
    const end = Date.now() + seconds * 1000;
    while (Date.now() < end) {
      head = await chain.waitForBlockAfter(head);
      const txs = Array.from({ length: options.txPerBlock }, () => protocolTx(chain.deployment, sent++));
      hashes.push(...(await chain.sendBatch(txs)));
    }
    return hashes;
  };
  log(`warming up: ${options.txPerBlock} tx per block for ${options.warmupSeconds} s`);
  await load(options.warmupSeconds);
  const cpuBefore = await cpuOf(pids());
  const windowStart = Date.now();
  log(`measuring: ${options.txPerBlock} tx per block for ${options.measureSeconds} s`);
  const measured = await load(options.measureSeconds);
  const last = measured.at(-1);
  if (last) await waitDelivered(procs, last, options.clients, log);
  const windowSeconds = (Date.now() - windowStart) / 1000;
  const cpuAfter = await cpuOf(pids());

  const results: FanoutClientsResult[] = [];
  for (const [i, p] of procs.entries()) {
    const out = join(work, `fanout-clients-${i}.json`);
    await p.request({ cmd: "collect", out });
    results.push(JSON.parse(await readFile(out, "utf8")) as FanoutClientsResult);
    p.child.disconnect();
  }
  const blocks = await groupByBlock(chain, measured);
  const figures = fanoutLatency(
    results,
    blocks.map((b) => b.hashes),
  );
  return {
    ...figures,
    blocks: blocks.map((b, i) => ({
      number: b.number,
      transactions: b.hashes.length,
      delivered: figures.deliveredPerBlock[i] ?? 0,
    })),
    closedClients: results.reduce((n, r) => n + r.closed.length, 0),
    cpu: {
      protoscan: cpuAfter.protoscan - cpuBefore.protoscan,
      anvil: cpuAfter.anvil - cpuBefore.anvil,
      clients: cpuAfter.clients - cpuBefore.clients,
    },
    windowSeconds,
  };
}

async function cpuOf(pids: Record<"protoscan" | "anvil" | "clients", number[]>) {
  const sum = async (list: number[]) => (await Promise.all(list.map(cpuSeconds))).reduce((a, b) => a + b, 0);
  return {
    protoscan: await sum(pids.protoscan),
    anvil: await sum(pids.anvil),
    clients: await sum(pids.clients),
  };
}

/**
 * Wait until every client has received `hash` (the last transaction sent), or until the clients have
 * received no message at all for 15 s: the run then reports what did not arrive instead of waiting forever.
 */
async function waitDelivered(
  procs: readonly ClientProcess[],
  hash: Hex,
  clients: number,
  log: (line: string) => void,
): Promise<void> {
  let received = 0;
  let messages = -1;
  let progressAt = Date.now();
  while (Date.now() - progressAt < 15_000) {
    const replies = await Promise.all(procs.map((p) => p.request({ cmd: "count", hash })));
    received = 0;
    let now = 0;
    for (const reply of replies) {
      if (reply.type !== "count") continue;
      received += reply.received;
      now += reply.messages;
    }
    if (received === clients) return;
    if (now > messages) {
      messages = now;
      progressAt = Date.now();
    }
    await sleep(100);
  }
  log(`the last transaction reached ${received} of ${clients} clients; no message for 15 s`);
}

/** The measured hashes grouped by the block that mined them, in block order. */
async function groupByBlock(
  chain: BenchChain,
  hashes: readonly Hex[],
): Promise<{ number: number; hashes: string[] }[]> {
  const wanted = new Set<string>(hashes.map((h) => h.toLowerCase()));
  const first = (await chain.waitForReceipt(hashes[0]!)).blockNumber;
  const last = (await chain.waitForReceipt(hashes.at(-1)!)).blockNumber;
  const blocks: { number: number; hashes: string[] }[] = [];
  for (let n = first; n <= last; n++) {
    const block = (await chain.rpc("eth_getBlockByNumber", [`0x${n.toString(16)}`, false])) as {
      transactions?: unknown[];
    } | null;
    const ours = (block?.transactions ?? []).filter(
      (h): h is string => typeof h === "string" && wanted.has(h.toLowerCase()),
    );
    if (ours.length > 0) blocks.push({ number: n, hashes: ours });
  }
  return blocks;
}
