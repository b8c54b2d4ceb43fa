/**
 * A child process of `npm run bench:realtime` holding many WebSocket clients of protoscan's `/ws`, each
 * subscribed to `transactions`, noting when each of them received each transaction message. Started with
 * `fork(…, { execArgv: ["--import", "tsx"] })` and driven over IPC:
 *
 *   parent -> {cmd: "connect", url, clients}   child -> {type: "ready", clients} once every one is subscribed
 *   parent -> {cmd: "count", hash}             child -> {type: "count", received, messages}: clients that got
 *                                              `hash` so far, transaction messages received by all of them
 *   parent -> {cmd: "collect", out}            child -> {type: "collected"} once `out` holds a FanoutClientsResult
 *
 * The clients are measuring instruments, kept cheap so that they steal as little CPU as possible from the
 * server on the same machine: no permessage-deflate, no UTF-8 validation, the hash read from the raw bytes.
 */
import { writeFile } from "node:fs/promises";
import WebSocket from "ws";
import { errorMessage } from "../../src/internal/errors.ts";
import { wallClockMs } from "./latencyStats.ts";
import { transactionHashOf } from "./transactionHashOf.ts";

/** What one client process writes: per transaction hash, the arrival time (ms) at each of its clients. */
export type FanoutClientsResult = {
  clients: number;
  /** hash -> arrival time per client index (null: never arrived) */
  arrivals: Record<string, (number | null)[]>;
  /** clients whose connection closed before `collect`, with the close code */
  closed: { client: number; code: number }[];
};

export type FanoutCommand =
  | { cmd: "connect"; url: string; clients: number }
  | { cmd: "count"; hash: string }
  | { cmd: "collect"; out: string };
export type FanoutReply =
  | { type: "ready"; clients: number }
  | { type: "count"; received: number; messages: number }
  | { type: "collected" }
  | { type: "failed"; error: string };

const sockets: WebSocket[] = [];
const arrivals = new Map<string, Float64Array>();
const closed: { client: number; code: number }[] = [];
let total = 0;
let messages = 0;

const reply = (message: FanoutReply) => process.send?.(message);

function record(client: number, frame: Buffer): void {
  const at = wallClockMs();
  const hash = transactionHashOf(frame);
  if (hash === null) return;
  messages++;
  let times = arrivals.get(hash);
  if (!times) {
    times = new Float64Array(total).fill(Number.NaN);
    arrivals.set(hash, times);
  }
  if (Number.isNaN(times[client]!)) times[client] = at;
}

/** Open one client and resolve once its subscription is confirmed. */
function open(url: string, client: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, skipUTF8Validation: true });
    sockets[client] = ws;
    let ready = false;
    ws.on("message", (data: Buffer) => {
      if (!ready) {
        if (data.includes('"type":"subscribed"')) {
          ready = true;
          resolve();
        }
        return;
      }
      record(client, data);
    });
    ws.once("open", () => ws.send(JSON.stringify({ op: "subscribe", topic: "transactions", id: client })));
    ws.once("error", (error) => {
      if (!ready) reject(error);
    });
    ws.once("close", (code) => {
      closed.push({ client, code });
      if (!ready) reject(new Error(`client ${client} closed with ${code} before subscribing`));
    });
  });
}

async function connect(url: string, clients: number): Promise<void> {
  total = clients;
  // In waves, so that the server's accept backlog never overflows.
  for (let first = 0; first < clients; first += 50) {
    const wave: Promise<void>[] = [];
    for (let client = first; client < Math.min(clients, first + 50); client++) wave.push(open(url, client));
    await Promise.all(wave);
  }
}

async function collect(out: string): Promise<void> {
  const result: FanoutClientsResult = { clients: total, arrivals: {}, closed };
  for (const [hash, times] of arrivals) {
    result.arrivals[hash] = Array.from(times, (t) => (Number.isNaN(t) ? null : t));
  }
  await writeFile(out, JSON.stringify(result));
  for (const ws of sockets) ws.terminate();
}

/** How many of this process' clients have received `hash`. */
function count(hash: string): number {
  let received = 0;
  for (const t of arrivals.get(hash.toLowerCase()) ?? []) if (!Number.isNaN(t)) received++;
  return received;
}

async function handle(message: FanoutCommand): Promise<FanoutReply> {
  switch (message.cmd) {
    case "connect":
      await connect(message.url, message.clients);
      return { type: "ready", clients: total };
    case "count":
      return { type: "count", received: count(message.hash), messages };
    case "collect":
      await collect(message.out);
      return { type: "collected" };
  }
}

process.on("message", (message: FanoutCommand) => {
  handle(message).then(reply, (error: unknown) => reply({ type: "failed", error: errorMessage(error) }));
});
// The parent going away (or closing the channel) ends the clients too.
process.on("disconnect", () => process.exit(0));
