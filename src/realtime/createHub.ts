import type { IngestEvent } from "../ingest/broadcaster.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage } from "../internal/errors.ts";
import { eventTopics } from "./eventTopics.ts";
import { createHubMetrics, type DisconnectReason } from "./hubMetrics.ts";
import { parseClientFrame } from "./parseClientFrame.ts";
import { topicCatalog } from "./parseTopic.ts";
import {
  eventMessage,
  serializeEventData,
  serverMessages,
  type TransactionJsonOf,
} from "./serverMessages.ts";

/**
 * The slice of a `ws` WebSocket (the server side @fastify/websocket hands to a route) the hub uses; typed
 * here because the project has no `@types/ws`.
 */
export type HubSocket = {
  readonly readyState: number;
  /** bytes queued for sending and not yet handed to the kernel */
  readonly bufferedAmount: number;
  send(data: string | Buffer, options?: { binary: boolean }): void;
  ping(): void;
  close(code: number, reason: string): void;
  terminate(): void;
  on(event: "message", listener: (data: unknown, isBinary: boolean) => void): unknown;
  on(event: "pong" | "close", listener: () => void): unknown;
};

/**
 * An event whose topics and serialized `data` were built elsewhere: the PostgreSQL fan-out builds them from
 * the stored rows (realtime/createPgFanout.ts), with the same functions the hub applies to an `IngestEvent`.
 */
export type PreparedEvent = {
  type: IngestEvent["type"];
  prepared: true;
  topics: readonly string[];
  data: string;
};

/** What a hub delivers: an ingest event of this process, or a prepared one from another. */
export type HubEvent = IngestEvent | PreparedEvent;

/**
 * Where the hub's events come from: the in-process `Broadcaster` of the ingest pipeline (PGlite, one
 * process), or the PostgreSQL LISTEN/NOTIFY fan-out feeding every process that serves WebSockets (SPEC §5,
 * §9). Events arrive in commit order, which is block order for the polling indexer.
 */
export type HubSource = {
  /**
   * `wanted`, when given, says whether an event with these topics has a subscriber now: a source may leave
   * out, unprepared, the transaction events nobody wants (valueEvents.ts does; the others ignore it).
   */
  subscribe(listener: (event: HubEvent) => void, wanted?: (topics: readonly string[]) => boolean): () => void;
};

export type HubOptions = {
  /** server ping period (SPEC §5: 30 s); a peer that misses two pongs is dropped */
  pingIntervalMs: number;
  /** topics one connection may hold (SPEC §5: 100) */
  maxTopics: number;
  /** a connection whose send buffer grows past this is closed with 1013 (SPEC §5: 1 MiB) */
  maxBufferedBytes: number;
  /** how long a closed connection may take to finish the close handshake before it is destroyed */
  closeGraceMs: number;
  /**
   * bytes handed to sockets per turn of the event loop, all connections together, before the hub yields so
   * that sockets can drain and other work (HTTP requests) can run
   */
  sliceBytes: number;
  /** bytes one connection may be handed per turn: what it holds corked, far below `maxBufferedBytes` */
  connectionSliceBytes: number;
};

export const DEFAULT_HUB_OPTIONS: HubOptions = {
  pingIntervalMs: 30_000,
  maxTopics: 100,
  maxBufferedBytes: 1024 * 1024,
  closeGraceMs: 5_000,
  sliceBytes: 8 * 1024 * 1024,
  connectionSliceBytes: 256 * 1024,
};

/** WebSocket close codes the hub uses (RFC 6455 §7.4.1). */
export const CLOSE_CODES = { goingAway: 1001, tryAgainLater: 1013 } as const;

/** The WebSocket hub (SPEC §5): connections, their topics, and fan-out of ingest events to them. */
export type Hub = {
  /** Start consuming the source and pinging peers. */
  start(): void;
  /**
   * Serve one upgraded connection until it closes. `transport` is the TCP socket under it (the upgraded
   * request's socket): the hub corks it while it queues a turn's broadcasts, so that they leave in one write.
   */
  attach(socket: HubSocket, meta?: { ip?: string; transport?: HubTransport }): void;
  /** Close every connection with `code` (1001 on shutdown). */
  closeAll(code: number, reason: string): void;
  /** Stop consuming, stop pinging, close every connection with 1001. */
  stop(): Promise<void>;
  /** connections being served (not closing), topics held by at least one of them, events not yet sent */
  stats(): { connections: number; topics: number; queuedEvents: number };
};

/** The slice of the `net.Socket` under a WebSocket that the hub uses. */
export type HubTransport = { cork(): void; uncork(): void };

type Connection = {
  socket: HubSocket;
  transport: HubTransport | undefined;
  /** bytes of broadcasts handed to it in the current slice (corked in its transport until the slice ends) */
  sliceBytes: number;
  ip: string | undefined;
  topics: Set<string>;
  missedPongs: number;
  closing: boolean;
  graceTimer: NodeJS.Timeout | undefined;
};

const OPEN = 1;

/**
 * Create the hub. Events from `deps.source` are queued and delivered in order, a slice at a time: each
 * event's data is serialized once, each matching topic's message once, and the hub yields to the event loop
 * between slices so a burst (a backfilled range) cannot starve sockets of the chance to drain. A socket whose
 * send buffer still passes `maxBufferedBytes` is closed with 1013 without slowing the others.
 *
 * Within a slice every receiving connection's TCP socket is corked, and uncorked once the slice is queued:
 * the slice's frames leave in one `writev` per connection instead of one per message. At 1,000 clients and
 * 50 transactions a second, per-message writes were most of the hub's CPU (docs/performance.md).
 */
export function createHub(
  common: Common,
  deps: {
    source: HubSource;
    /** a stored transaction's Transaction JSON (api/toTransactionJson.ts `transactionJsonOf`) */
    transactionJson: TransactionJsonOf;
    options?: Partial<HubOptions>;
  },
): Hub {
  const options: HubOptions = { ...DEFAULT_HUB_OPTIONS, ...deps.options };
  const catalog = topicCatalog(common.config);
  const metrics = createHubMetrics(common.metrics.registry);
  const logger = common.logger.child({ subsystem: "ws" });

  const connections = new Set<Connection>();
  /** topic -> its subscribers; a topic is present only while someone holds it */
  const index = new Map<string, Set<Connection>>();
  const queue: HubEvent[] = [];
  /** connections the current slice sent to, and the most bytes any one of them got */
  const slice: Connection[] = [];
  let sliceMax = 0;
  let draining: NodeJS.Immediate | undefined;
  let unsubscribe: (() => void) | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  /** Send a text frame: a reply as a string, a broadcast as UTF-8 bytes encoded once for all subscribers. */
  const send = (conn: Connection, text: string | Buffer): boolean => {
    if (conn.closing || conn.socket.readyState !== OPEN) return false;
    if (typeof text === "string") {
      conn.socket.send(text);
      checkBuffered(conn);
      return true;
    }
    if (conn.sliceBytes === 0) {
      slice.push(conn);
      conn.transport?.cork();
    }
    conn.socket.send(text, { binary: false });
    conn.sliceBytes += text.length;
    if (conn.sliceBytes > sliceMax) sliceMax = conn.sliceBytes;
    // A corked socket is checked once the slice has been written (endSlice).
    if (!conn.transport) checkBuffered(conn);
    return true;
  };

  /** Close a connection whose send buffer passed the limit: the client reads too slowly. */
  const checkBuffered = (conn: Connection) => {
    if (conn.socket.bufferedAmount > options.maxBufferedBytes) {
      logger.warn(
        { ip: conn.ip, buffered: conn.socket.bufferedAmount },
        "websocket client too slow: closing",
      );
      drop(conn, CLOSE_CODES.tryAgainLater, "send buffer over limit: reading too slowly", "slow");
    }
  };

  /** End of a slice: write what every corked connection queued, then apply the send-buffer limit. */
  const endSlice = () => {
    for (const conn of slice) {
      conn.sliceBytes = 0;
      if (!conn.transport) continue;
      conn.transport.uncork();
      if (!conn.closing) checkBuffered(conn);
    }
    slice.length = 0;
    sliceMax = 0;
  };

  const detach = (conn: Connection) => {
    for (const topic of conn.topics) {
      const subscribers = index.get(topic);
      subscribers?.delete(conn);
      if (subscribers?.size === 0) index.delete(topic);
    }
    conn.topics.clear();
  };

  /** End a connection from the server side: no more messages, a close frame, then destroy after a grace. */
  const drop = (conn: Connection, code: number, reason: string, why: DisconnectReason) => {
    if (conn.closing) return;
    conn.closing = true;
    detach(conn);
    metrics.disconnects.inc({ reason: why });
    conn.socket.close(code, reason);
    conn.graceTimer = setTimeout(() => conn.socket.terminate(), options.closeGraceMs);
    conn.graceTimer.unref();
  };

  /** Send `event` to its subscribers; returns the bytes handed over. */
  const deliver = (event: HubEvent): number => {
    const all = "prepared" in event ? event.topics : eventTopics(event);
    const topics = all.filter((topic) => index.has(topic));
    if (topics.length === 0) return 0;
    const data = "prepared" in event ? event.data : serializeEventData(event, deps.transactionJson);
    let bytes = 0;
    let sent = 0;
    for (const topic of topics) {
      const subscribers = index.get(topic);
      if (!subscribers) continue;
      const message = Buffer.from(eventMessage(event.type, topic, data), "utf8");
      // Deleting from a Set while iterating it is safe: a dropped slow client is simply not visited again.
      for (const conn of subscribers) {
        if (send(conn, message)) {
          bytes += message.length;
          sent++;
        }
      }
    }
    metrics.messages.inc({ type: event.type }, sent);
    return bytes;
  };

  const drain = () => {
    draining = undefined;
    let bytes = 0;
    let next = 0;
    while (next < queue.length && bytes < options.sliceBytes && sliceMax < options.connectionSliceBytes) {
      const event = queue[next++]!;
      try {
        bytes += deliver(event);
      } catch (error) {
        // A malformed event must neither stop the queue nor escape into the event loop (it would kill the
        // process); the clients miss this one event and the error is visible.
        logger.error({ err: errorMessage(error), type: event.type }, "websocket broadcast failed");
      }
    }
    endSlice();
    queue.splice(0, next);
    if (queue.length > 0) draining = setImmediate(drain);
  };

  const onEvent = (event: HubEvent) => {
    // Nobody listening: nothing to queue (the common case for an indexer catching up with no clients).
    if (index.size === 0 && queue.length === 0) return;
    queue.push(event);
    draining ??= setImmediate(drain);
  };

  const reply = (conn: Connection, text: string) => {
    if (send(conn, text)) metrics.messages.inc({ type: "reply" });
  };

  const handleFrame = (conn: Connection, data: unknown, isBinary: boolean) => {
    if (conn.closing) return;
    // Any frame proves the peer alive, like a pong.
    conn.missedPongs = 0;
    const buffer = frameBuffer(data);
    const request = parseClientFrame(
      isBinary
        ? { binary: true, bytes: buffer.length }
        : { text: buffer.toString("utf8"), bytes: buffer.length },
      catalog,
    );
    switch (request.op) {
      case "error":
        metrics.clientErrors.inc({ code: request.code });
        reply(conn, serverMessages.error(request.code, request.message, request.id));
        return;
      case "ping":
        reply(conn, serverMessages.pong(request.id, request.hasId));
        return;
      case "unsubscribe": {
        conn.topics.delete(request.topic);
        const subscribers = index.get(request.topic);
        subscribers?.delete(conn);
        if (subscribers?.size === 0) index.delete(request.topic);
        reply(conn, serverMessages.unsubscribed(request.topic, request.id));
        return;
      }
      case "subscribe": {
        if (!conn.topics.has(request.topic)) {
          if (conn.topics.size >= options.maxTopics) {
            metrics.clientErrors.inc({ code: "TOO_MANY_TOPICS" });
            const message = `a connection may hold at most ${options.maxTopics} topics`;
            reply(conn, serverMessages.error("TOO_MANY_TOPICS", message, request.id));
            return;
          }
          conn.topics.add(request.topic);
          let subscribers = index.get(request.topic);
          if (!subscribers) {
            subscribers = new Set();
            index.set(request.topic, subscribers);
          }
          subscribers.add(conn);
        }
        reply(conn, serverMessages.subscribed(request.topic, request.id));
        return;
      }
    }
  };

  const tick = () => {
    for (const conn of connections) {
      if (conn.closing) continue;
      if (conn.missedPongs >= 2) {
        // Unresponsive: a close handshake would wait for it in vain, so the socket is destroyed at once.
        logger.debug({ ip: conn.ip }, "websocket peer missed two pongs: dropping");
        conn.closing = true;
        detach(conn);
        metrics.disconnects.inc({ reason: "heartbeat" });
        conn.socket.terminate();
        continue;
      }
      conn.missedPongs++;
      conn.socket.ping();
    }
  };

  const closeAll: Hub["closeAll"] = (code, reason) => {
    for (const conn of connections) drop(conn, code, reason, "shutdown");
  };

  return {
    start() {
      unsubscribe ??= deps.source.subscribe(onEvent, (topics) => topics.some((topic) => index.has(topic)));
      heartbeat ??= setInterval(tick, options.pingIntervalMs);
      heartbeat.unref();
    },
    attach(socket, meta = {}) {
      const conn: Connection = {
        socket,
        transport: meta.transport,
        sliceBytes: 0,
        ip: meta.ip,
        topics: new Set(),
        missedPongs: 0,
        closing: false,
        graceTimer: undefined,
      };
      connections.add(conn);
      metrics.connections.inc();
      socket.on("message", (data, isBinary) => handleFrame(conn, data, isBinary));
      socket.on("pong", () => {
        conn.missedPongs = 0;
      });
      socket.on("close", () => {
        clearTimeout(conn.graceTimer);
        detach(conn);
        conn.closing = true;
        if (connections.delete(conn)) metrics.connections.dec();
      });
    },
    closeAll,
    async stop() {
      unsubscribe?.();
      unsubscribe = undefined;
      clearInterval(heartbeat);
      heartbeat = undefined;
      if (draining) clearImmediate(draining);
      draining = undefined;
      queue.length = 0;
      closeAll(CLOSE_CODES.goingAway, "server shutting down");
    },
    stats() {
      let open = 0;
      for (const conn of connections) if (!conn.closing) open++;
      return { connections: open, topics: index.size, queuedEvents: queue.length };
    },
  };
}

/** A `ws` message payload as one Buffer (`nodebuffer`, `arraybuffer` or `fragments` binary types). */
function frameBuffer(data: unknown): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data.filter((part): part is Buffer => Buffer.isBuffer(part)));
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  return Buffer.from(String(data), "utf8");
}
