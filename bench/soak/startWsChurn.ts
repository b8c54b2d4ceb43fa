import WebSocket from "ws";
import { checkTransactionMessage } from "./checkTransactionMessage.ts";
import type { ErrorTally } from "./errorTally.ts";

/** From `new WebSocket` to the last `subscribed` reply: longer is an error (a client gives up). */
const SUBSCRIBE_TIMEOUT_MS = 60_000;

/** Counts of the WebSocket side of a soak run. */
export type WsStats = {
  connected: number;
  left: number;
  transactionMessages: number;
  removedMessages: number;
  pongs: number;
  /** connect + subscribe times (ms from `new WebSocket` to the last `subscribed`), with when they ended */
  ready: { at: number; ms: number }[];
};

/** A client that receives `transaction` messages (the long-lived watcher, or one of the churning clients). */
type SoakClient = {
  /** every topic confirmed */
  ready(): boolean;
  /** ms since it was created */
  age(): number;
  /** leave: a clean close (1000) or a dropped connection (terminate, no close frame) */
  leave(abrupt: boolean): void;
  /** `{"op":"ping"}`: a `pong` must come back */
  ping(): void;
  /** unsubscribe from one topic: once `unsubscribed` is back, a message on it is an error */
  unsubscribeOne(): void;
};

export type WsChurn = {
  stats: WsStats;
  /** clients open now (the watcher included) */
  open(): number;
  /** stop churning and close every client */
  stop(): void;
};

/**
 * Keep `clients` WebSocket clients on `/ws` and churn them: every `churnMs` the oldest leaves once it is
 * subscribed (alternately with a close frame and by dropping the TCP connection) and a new one connects and
 * subscribes to one to three topics from `topicsFor`; now and then a client pings or unsubscribes from a topic. Every message is checked: replies
 * must answer what was asked (subscribed within 60 s, pong after ping), each `transaction` message must be
 * well-formed and belong to its topic (checkTransactionMessage), and no client may get the same transaction
 * twice on one topic. Besides these, `watcher` stays subscribed to `transactions` for the whole run and
 * reports each transaction hash it receives (to feed the reads and to check that every expected
 * transaction is broadcast).
 */
export function startWsChurn(options: {
  wsUrl: string;
  clients: number;
  churnMs: number;
  topicsFor: (i: number) => string[];
  errors: ErrorTally;
  onTransaction: (hash: string, blockNumber: number) => void;
}): WsChurn {
  const { errors } = options;
  const stats: WsStats = {
    connected: 0,
    left: 0,
    transactionMessages: 0,
    removedMessages: 0,
    pongs: 0,
    ready: [],
  };
  const live = new Set<WebSocket>();
  let stopped = false;

  const connect = (topics: string[], i: number, onTx?: (hash: string, block: number) => void): SoakClient => {
    const created = performance.now();
    const ws = new WebSocket(options.wsUrl, { perMessageDeflate: false });
    live.add(ws);
    const subscribed = new Set<string>();
    const pending = new Map(topics.map((topic, id) => [id, topic]));
    const seen = new Set<string>();
    const unsubscribing = new Map<string, string>();
    let leaving = false;
    let pings = 0;
    const subscribeTimer = setTimeout(() => {
      if (pending.size > 0 && !leaving)
        errors.add("ws subscribe timeout", `client ${i}: ${[...pending.values()].join(", ")}`);
    }, SUBSCRIBE_TIMEOUT_MS);
    ws.on("open", () => {
      stats.connected++;
      for (const [id, topic] of pending) ws.send(JSON.stringify({ op: "subscribe", topic, id }));
    });
    ws.on("message", (frame: Buffer) => {
      let message: {
        type?: unknown;
        topic?: unknown;
        id?: unknown;
        data?: { txHash?: unknown; blockNumber?: unknown };
      };
      try {
        message = JSON.parse(frame.toString("utf8"));
      } catch {
        errors.add("ws malformed message", `client ${i}: not JSON: ${frame.toString("utf8", 0, 100)}`);
        return;
      }
      switch (message.type) {
        case "subscribed": {
          const topic = typeof message.id === "number" ? pending.get(message.id) : undefined;
          // The server answers with the canonical topic, addresses lowercase (docs/websocket.md).
          const canonical = typeof message.topic === "string" ? message.topic : "";
          if (topic === undefined || topic.toLowerCase() !== canonical) {
            errors.add("ws malformed message", `client ${i}: unexpected ${frame.toString("utf8", 0, 200)}`);
            return;
          }
          pending.delete(message.id as number);
          subscribed.add(canonical);
          if (pending.size === 0) {
            clearTimeout(subscribeTimer);
            const now = performance.now();
            stats.ready.push({ at: now, ms: now - created });
          }
          return;
        }
        case "transaction": {
          stats.transactionMessages++;
          const problem = checkTransactionMessage(message, subscribed);
          if (problem !== null) {
            errors.add("ws malformed message", `client ${i}: ${problem}`);
            return;
          }
          const hash = message.data!.txHash as string;
          const key = `${message.topic as string} ${hash}`;
          if (seen.has(key)) errors.add("ws duplicate message", `client ${i}: ${key}`);
          seen.add(key);
          onTx?.(hash, message.data!.blockNumber as number);
          return;
        }
        case "unsubscribed": {
          const topic = typeof message.id === "string" ? unsubscribing.get(message.id) : undefined;
          if (topic === undefined || topic !== message.topic) {
            errors.add("ws malformed message", `client ${i}: unexpected ${frame.toString("utf8", 0, 200)}`);
            return;
          }
          unsubscribing.delete(message.id as string);
          subscribed.delete(topic);
          return;
        }
        case "pong":
          if (pings-- <= 0) errors.add("ws malformed message", `client ${i}: pong without ping`);
          stats.pongs++;
          return;
        case "removed":
          // No reorg is made on this chain: a removal would be protoscan seeing one that did not happen.
          stats.removedMessages++;
          errors.add("ws unexpected removed", `client ${i}: ${frame.toString("utf8", 0, 200)}`);
          return;
        default:
          errors.add("ws error message", `client ${i}: ${frame.toString("utf8", 0, 200)}`);
      }
    });
    ws.on("error", (error) => {
      if (!leaving) errors.add("ws socket error", `client ${i}: ${error.message}`);
    });
    ws.on("close", (code) => {
      clearTimeout(subscribeTimer);
      live.delete(ws);
      if (!leaving) errors.add("ws closed by server", `client ${i}: close code ${code}`);
    });
    const open = () => ws.readyState === WebSocket.OPEN;
    return {
      ready: () => pending.size === 0,
      age: () => performance.now() - created,
      leave(abrupt) {
        leaving = true;
        stats.left++;
        if (abrupt || !open()) ws.terminate();
        else ws.close(1000, "bye");
      },
      ping() {
        if (!open()) return;
        pings++;
        ws.send('{"op":"ping"}');
      },
      unsubscribeOne() {
        const topic = [...subscribed][0];
        if (topic === undefined || !open()) return;
        unsubscribing.set(`u${i}`, topic);
        ws.send(JSON.stringify({ op: "unsubscribe", topic, id: `u${i}` }));
      },
    };
  };

  const watcher = connect(["transactions"], -1, options.onTransaction);
  const pool: SoakClient[] = [];
  let n = 0;
  const join = () => {
    const i = n++;
    pool.push(connect(options.topicsFor(i), i));
  };
  for (let k = 0; k < options.clients; k++) join();
  const timer = setInterval(() => {
    if (stopped) return;
    // The oldest leaves once it is subscribed (a slow server slows the churn instead of cutting clients
    // off mid-handshake), or when it has given up waiting (counted as an error by its own timer).
    const oldest = pool[0];
    if (oldest && (oldest.ready() || oldest.age() > SUBSCRIBE_TIMEOUT_MS)) {
      pool.shift();
      oldest.leave(n % 2 === 0);
    }
    if (pool.length < options.clients) join();
    const someone = pool[n % pool.length];
    if (n % 5 === 0) someone?.ping();
    if (n % 7 === 0) someone?.unsubscribeOne();
  }, options.churnMs);

  return {
    stats,
    open: () => [...live].filter((ws) => ws.readyState === WebSocket.OPEN).length,
    stop() {
      stopped = true;
      clearInterval(timer);
      for (const client of pool.splice(0)) client.leave(false);
      watcher.leave(false);
    },
  };
}
