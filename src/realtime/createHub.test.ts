import { describe, expect, test } from "vitest";
import { apiTransactionJson } from "../../test/helpers/apiSerializer.ts";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import { createHub, type HubEvent, type HubOptions, type HubSocket, type HubTransport } from "./createHub.ts";

/**
 * How the hub writes a slice of broadcasts: corked transports, one uncork per connection per slice, the
 * send-buffer limit applied after the uncork. Sockets here are recording stand-ins (what the hub calls on
 * them is the point); real sockets, real clients and the 1013 of a paused reader are in
 * test/e2e/websocket.test.ts.
 */

type Recorder = {
  socket: HubSocket & { bufferedAmount: number; closedWith: number | null };
  transport: HubTransport;
  /** what happened to this connection, in order: cork, uncork, or the length of a broadcast frame */
  log: (string | number)[];
  /** client -> server text frame */
  receive(text: string): void;
};

function recorder(onUncork: (r: Recorder) => void = () => {}): Recorder {
  const listeners = new Map<string, (data: unknown, isBinary: boolean) => void>();
  const log: (string | number)[] = [];
  const socket: Recorder["socket"] = {
    readyState: 1,
    bufferedAmount: 0,
    closedWith: null,
    send(data: string | Buffer) {
      if (typeof data !== "string") log.push(data.length);
    },
    ping() {},
    close(code: number) {
      socket.closedWith = code;
    },
    terminate() {},
    on(event: string, listener: (data: unknown, isBinary: boolean) => void) {
      listeners.set(event, listener);
      return socket;
    },
  };
  const r: Recorder = {
    socket,
    transport: {
      cork: () => log.push("cork"),
      uncork: () => {
        log.push("uncork");
        onUncork(r);
      },
    },
    log,
    receive: (text) => listeners.get("message")?.(Buffer.from(text), false),
  };
  return r;
}

/** A prepared `transactions` event whose message is `size` bytes plus the envelope. */
const event = (n: number, size = 1000): HubEvent => ({
  type: "transaction",
  prepared: true,
  topics: ["transactions", "protocol:demoswap"],
  data: JSON.stringify({ txHash: `0x${n.toString(16).padStart(64, "0")}`, pad: "x".repeat(size) }),
});
const ENVELOPE = '{"type":"transaction","topic":"transactions","data":}'.length;
const frameBytes = (size: number) =>
  JSON.stringify({ txHash: `0x${"0".repeat(64)}`, pad: "x".repeat(size) }).length + ENVELOPE;

function setup(options: Partial<HubOptions> = {}) {
  let publish: (event: HubEvent) => void = () => {};
  const config = testConfig({ urls: ["http://127.0.0.1:1"] });
  const hub = createHub(testCommon(config), {
    transactionJson: apiTransactionJson(config),
    source: {
      subscribe(listener) {
        publish = listener;
        return () => {};
      },
    },
    options,
  });
  hub.start();
  const connect = (r: Recorder, withTransport = true) => {
    hub.attach(r.socket, withTransport ? { ip: "127.0.0.1", transport: r.transport } : { ip: "127.0.0.1" });
    r.receive(JSON.stringify({ op: "subscribe", topic: "transactions", id: 1 }));
  };
  const publishAll = (events: HubEvent[]) => {
    for (const e of events) publish(e);
  };
  return { hub, connect, publish: publishAll };
}

/** Let the hub's setImmediate slices run. */
const drained = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("createHub: broadcast slices", () => {
  test("default: a slice's frames to a connection are written between one cork and one uncork", async () => {
    const { hub, connect, publish } = setup();
    const a = recorder();
    const b = recorder();
    connect(a);
    connect(b);
    publish([1, 2, 3, 4, 5].map((n) => event(n)));
    await drained();
    const frame = frameBytes(1000);
    for (const r of [a, b]) expect(r.log).toEqual(["cork", frame, frame, frame, frame, frame, "uncork"]);
    await hub.stop();
  });

  test("behavior: a slice ends once one connection was handed connectionSliceBytes", async () => {
    const frame = frameBytes(1000);
    const { hub, connect, publish } = setup({ connectionSliceBytes: 2 * frame + 1 });
    const a = recorder();
    connect(a);
    publish([1, 2, 3, 4, 5, 6, 7].map((n) => event(n)));
    await drained();
    expect(a.log).toEqual([
      "cork",
      frame,
      frame,
      frame,
      "uncork",
      "cork",
      frame,
      frame,
      frame,
      "uncork",
      "cork",
      frame,
      "uncork",
    ]);
    await hub.stop();
  });

  test("behavior: a slice ends once sliceBytes were handed to all connections together", async () => {
    const frame = frameBytes(1000);
    const { hub, connect, publish } = setup({ sliceBytes: 4 * frame });
    const [a, b] = [recorder(), recorder()];
    connect(a);
    connect(b);
    publish([1, 2, 3].map((n) => event(n)));
    await drained();
    // 2 events x 2 connections fill a slice
    for (const r of [a, b]) expect(r.log).toEqual(["cork", frame, frame, "uncork", "cork", frame, "uncork"]);
    await hub.stop();
  });

  test("behavior: the send-buffer limit applies after the uncork, to the slow connection only", async () => {
    const { hub, connect, publish } = setup({ maxBufferedBytes: 10_000 });
    // what the kernel did not take stays buffered: the slow client's 3 frames plus 9,000 bytes from before
    const slow = recorder((r) => {
      r.socket.bufferedAmount = 9_000 + 3 * frameBytes(1000);
    });
    const fast = recorder();
    connect(slow);
    connect(fast);
    publish([1, 2, 3].map((n) => event(n)));
    // nothing is judged while the frames sit corked
    expect(slow.socket.closedWith).toBeNull();
    await drained();
    expect(slow.socket.closedWith).toBe(1013);
    expect(fast.socket.closedWith).toBeNull();
    expect(hub.stats().connections).toBe(1);
    publish([event(4)]);
    await drained();
    expect(slow.log.filter((x) => typeof x === "number")).toHaveLength(3);
    expect(fast.log.filter((x) => typeof x === "number")).toHaveLength(4);
    await hub.stop();
  });

  test("args: a connection without transport is written frame by frame and checked after each", async () => {
    const { hub, connect, publish } = setup({ maxBufferedBytes: 10_000 });
    const a = recorder();
    connect(a, false);
    a.socket.bufferedAmount = 10_001;
    publish([1, 2].map((n) => event(n)));
    await drained();
    expect(a.log).toEqual([frameBytes(1000)]);
    expect(a.socket.closedWith).toBe(1013);
    await hub.stop();
  });
});
