import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A fault the proxy plays instead of forwarding a call to the upstream node.
 * - `http`: the whole HTTP request is answered with this status, headers and body (e.g. a provider's 429).
 * - `rpcError`: the matching call gets this JSON-RPC error object (inside a batch, only that item).
 * - `timeout`: the HTTP request is never answered.
 * - `drop`: the socket is destroyed without an answer.
 * - `malformed`: 200 with a truncated JSON body.
 * - `rewrite`: the matching call is forwarded and its `result` replaced by `rewrite(result, params)` (a
 *   provider answering with data that contradicts itself or the request).
 * - `rewriteBody`: the HTTP request is forwarded and the whole JSON answer (an array for a batch) replaced by
 *   `rewrite(answer)` (e.g. a batch answer whose ids do not match the request).
 */
export type RpcFault = (
  | { kind: "http"; status: number; headers?: Record<string, string>; body?: string }
  | { kind: "rpcError"; code: number; message: string; data?: unknown }
  | { kind: "timeout" }
  | { kind: "drop" }
  | { kind: "malformed" }
  | { kind: "rewrite"; rewrite: (result: unknown, params: unknown) => unknown }
  | { kind: "rewriteBody"; rewrite: (answer: unknown) => unknown }
) & {
  /** Only calls of this JSON-RPC method (default: any method). */
  method?: string;
  /** Only calls whose `params` pass this test, e.g. one eth_getLogs range (default: any params). */
  when?: (params: unknown) => boolean;
  /** How many times it fires (default: until `clearFaults`). HTTP-level faults count once per HTTP request. */
  times?: number;
};

/** One JSON-RPC call the proxy received. */
export type RecordedCall = {
  method: string;
  params: unknown;
  /** Index of the HTTP request it came in (0-based, in arrival order): calls sharing it were one batch. */
  request: number;
  /** The injected fault played on it, if any (an HTTP-level fault is played on every call of its request). */
  fault?: RpcFault;
};

export type RpcProxy = {
  /** `http://127.0.0.1:<port>`; any path is accepted, so credentials/keys can be added for tests. */
  url: string;
  /** JSON-RPC calls received per method, faulted ones included. */
  counts: Record<string, number>;
  /** HTTP requests received. */
  readonly httpRequests: number;
  /** Calls per HTTP request, in arrival order. */
  readonly batchSizes: number[];
  /** The `Authorization` header of the last HTTP request (credentials from the URL travel here). */
  readonly lastAuthorization: string | undefined;
  /** Every call received, in arrival order, with its params and the fault played on it. */
  readonly calls: readonly RecordedCall[];
  inject(fault: RpcFault): void;
  clearFaults(): void;
  /** Forget counts, batch sizes and recorded calls. */
  resetCounts(): void;
  close(): Promise<void>;
};

type Armed = { fault: RpcFault; remaining: number };
type JsonRpcCall = { id?: unknown; method?: unknown; params?: unknown };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/**
 * Start a JSON-RPC proxy in front of `upstream` (an anvil URL) with programmable faults per method.
 * Handles single calls and JSON-RPC batch arrays. Plain node:http, for tests only.
 */
export async function startRpcProxy(options: { upstream: string }): Promise<RpcProxy> {
  let faults: Armed[] = [];
  let counts: Record<string, number> = {};
  let httpRequests = 0;
  let batchSizes: number[] = [];
  let lastAuthorization: string | undefined;
  let recorded: RecordedCall[] = [];

  function take(call: RecordedCall, kinds: readonly RpcFault["kind"][]): RpcFault | undefined {
    const armed = faults.find(
      (a) =>
        a.remaining > 0 &&
        kinds.includes(a.fault.kind) &&
        (a.fault.method ?? call.method) === call.method &&
        (a.fault.when?.(call.params) ?? true),
    );
    if (!armed) return undefined;
    armed.remaining--;
    return armed.fault;
  }

  async function forward(calls: JsonRpcCall[], batch: boolean): Promise<unknown[]> {
    if (calls.length === 0) return [];
    const response = await fetch(options.upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(batch ? calls : calls[0]),
    });
    const parsed: unknown = await response.json();
    return Array.isArray(parsed) ? parsed : [parsed];
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    httpRequests++;
    lastAuthorization = req.headers.authorization;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      sendJson(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
      return;
    }
    const batch = Array.isArray(parsed);
    const items: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
    const calls: JsonRpcCall[] = items.filter(isRecord);
    batchSizes.push(calls.length);
    const methods = calls.map((call) => String(call.method));
    for (const method of methods) counts[method] = (counts[method] ?? 0) + 1;
    const records = calls.map(
      (call, i): RecordedCall => ({ method: methods[i]!, params: call.params, request: httpRequests - 1 }),
    );
    recorded.push(...records);

    let fault: RpcFault | undefined;
    for (const record of records) {
      fault ??= take(record, ["http", "timeout", "drop", "malformed", "rewriteBody"]);
    }
    if (fault) for (const record of records) record.fault = fault;
    if (fault?.kind === "timeout") return; // never answer; close() ends the connection
    if (fault?.kind === "drop") {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === "malformed") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"jsonrpc":"2.0","id":1,"result":"0x');
      return;
    }
    if (fault?.kind === "http") {
      const body = fault.body ?? "";
      const contentType = /^\s*[[{]/.test(body) ? "application/json" : "text/plain";
      res.writeHead(fault.status, { "content-type": contentType, ...fault.headers });
      res.end(body);
      return;
    }

    const answers: unknown[] = new Array(calls.length);
    const forwarded: JsonRpcCall[] = [];
    const slots: number[] = [];
    const rewrites = new Map<number, (result: unknown, params: unknown) => unknown>();
    calls.forEach((call, i) => {
      const rpc = take(records[i]!, ["rpcError", "rewrite"]);
      if (rpc?.kind === "rewrite") {
        records[i]!.fault = rpc;
        rewrites.set(i, rpc.rewrite);
      }
      if (rpc?.kind === "rpcError") {
        records[i]!.fault = rpc;
        const error = {
          code: rpc.code,
          message: rpc.message,
          ...(rpc.data !== undefined ? { data: rpc.data } : {}),
        };
        answers[i] = { jsonrpc: "2.0", id: call.id ?? null, error };
      } else {
        forwarded.push(call);
        slots.push(i);
      }
    });
    let upstream: unknown[];
    try {
      upstream = await forward(forwarded, batch);
    } catch (error) {
      sendJson(res, 502, { error: `upstream failed: ${String(error)}` });
      return;
    }
    const byId = new Map(upstream.filter(isRecord).map((answer) => [JSON.stringify(answer.id), answer]));
    slots.forEach((slot, k) => {
      answers[slot] = byId.get(JSON.stringify(forwarded[k]!.id)) ?? upstream[k];
    });
    for (const [slot, rewrite] of rewrites) {
      const answer = answers[slot];
      if (isRecord(answer) && "result" in answer) {
        answers[slot] = { ...answer, result: rewrite(answer.result, calls[slot]!.params) };
      }
    }
    const body = batch ? answers : answers[0];
    sendJson(res, 200, fault?.kind === "rewriteBody" ? fault.rewrite(body) : body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    get counts() {
      return counts;
    },
    get httpRequests() {
      return httpRequests;
    },
    get batchSizes() {
      return batchSizes;
    },
    get lastAuthorization() {
      return lastAuthorization;
    },
    get calls() {
      return recorded;
    },
    inject(fault) {
      faults.push({ fault, remaining: fault.times ?? Number.POSITIVE_INFINITY });
    },
    clearFaults() {
      faults = [];
    },
    resetCounts() {
      counts = {};
      httpRequests = 0;
      batchSizes = [];
      recorded = [];
    },
    close() {
      faults = [];
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
