import { isRecord } from "../internal/isRecord.ts";
import { redactUrl } from "../internal/redact.ts";
import { classifyRpcError } from "./classifyRpcError.ts";
import {
  type ChainError,
  HttpStatusError,
  InconsistentDataError,
  MalformedResponseError,
  TransientRpcError,
} from "./errors.ts";
import { createTokenBucket } from "./tokenBucket.ts";

/**
 * One JSON-RPC URL: batching, a requests-per-second ceiling, a timeout, and classification of every
 * failure. Retries and failover live one level up, in `createChainClient`.
 *
 * Why our own fetch instead of viem's `http()` transport: viem zips a batch response with the requests by
 * index, so a provider that answers a whole batch with one error object (Alchemy and QuickNode do, on
 * HTTP 429) or drops an item breaks every call with a TypeError instead of a per-item error; its errors put
 * the URL (and key) in `message`; and its `Retry-After` handling is tied to its own retry loop. Here each
 * call of a batch gets its own classified result, `Retry-After` reaches the classifier, each call inside a
 * batch takes its own rate-limit token, and nothing we throw quotes a credential.
 */
export type Endpoint = {
  /** The URL with credentials masked: the only form that may reach a log, an error or a metric. */
  label: string;
  /** Send one call (batched with the calls made in the same tick); rejects with a classified error. */
  request(method: string, params: readonly unknown[]): Promise<unknown>;
  /** Reject queued and in-flight calls and refuse new ones. */
  close(): void;
};

export type EndpointOptions = {
  url: string;
  /** Most calls per HTTP request (`rpc.batchSize`). */
  batchSize: number;
  /** Per HTTP request, response body included. */
  timeoutMs: number;
  /** Client-side ceiling, counting every call inside a batch (`rpc.maxRequestsPerSecond`). */
  maxRequestsPerSecond?: number | undefined;
  /** Aborts waits and in-flight requests (the process is shutting down). */
  signal?: AbortSignal | undefined;
  /** Called once per call actually sent over the wire (for counting). */
  onSend?: ((method: string) => void) | undefined;
};

type Pending = {
  id: number;
  method: string;
  params: readonly unknown[];
  resolve: (value: unknown) => void;
  reject: (error: ChainError) => void;
};

/** fetch() refuses URLs with userinfo: move `user:pass@` into an Authorization header (like viem does). */
function splitCredentials(url: string): { fetchUrl: string; headers: Record<string, string> } {
  const parsed = new URL(url);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (parsed.username || parsed.password) {
    const user = decodeURIComponent(parsed.username);
    const password = decodeURIComponent(parsed.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
    parsed.username = "";
    parsed.password = "";
  }
  return { fetchUrl: parsed.toString(), headers };
}

/** Create the transport for one RPC URL (http or https). */
export function createEndpoint(options: EndpointOptions): Endpoint {
  const { url, batchSize, timeoutMs } = options;
  const label = redactUrl(url);
  const { fetchUrl, headers } = splitCredentials(url);
  const closer = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, closer.signal]) : closer.signal;
  const bucket = options.maxRequestsPerSecond
    ? createTokenBucket({ ratePerSecond: options.maxRequestsPerSecond })
    : undefined;
  let queue: Pending[] = [];
  let timer: NodeJS.Timeout | undefined;
  let nextId = 1;

  const aborted = (method: string) =>
    new TransientRpcError(
      `${method} aborted: ${closer.signal.aborted ? "the chain client is closed" : "shutting down"}`,
      { method, url: label },
    );
  const classify = (error: unknown, method: string) => classifyRpcError(error, { method, url });

  /**
   * Hand each call of a batch its answer, matched by JSON-RPC id. An answer that cannot be matched for sure
   * (an id that was not asked, an id answered twice, a single answer naming another id) means the results
   * may belong to other calls: then no call of the batch takes one (`InconsistentDataError`, retried).
   */
  function settle(batch: Pending[], parsed: unknown): void {
    const byId = new Map<number, unknown>();
    let mismatch: string | undefined;
    if (Array.isArray(parsed)) {
      const asked = new Set(batch.map((call) => call.id));
      for (const item of parsed) {
        // An item without an id is an error the provider could not tie to a call: the call stays unanswered.
        if (!isRecord(item) || item.id === null || item.id === undefined) continue;
        const id = Number(item.id);
        if (!asked.has(id))
          mismatch ??= `an answer for id ${String(item.id).slice(0, 20)}, which was not asked`;
        else if (byId.has(id)) mismatch ??= `two answers for id ${id}`;
        else byId.set(id, item);
      }
    } else if (isRecord(parsed)) {
      const only = batch.length === 1 ? batch[0] : undefined;
      if (only) {
        if (
          "result" in parsed &&
          parsed.id !== null &&
          parsed.id !== undefined &&
          Number(parsed.id) !== only.id
        ) {
          mismatch = `the answer names id ${String(parsed.id).slice(0, 20)}, the request ${only.id}`;
        }
        byId.set(only.id, parsed);
      } else if (isRecord(parsed.error)) {
        // One error object for the whole batch (Alchemy / QuickNode rate limits): it applies to every call.
        for (const call of batch) byId.set(call.id, parsed);
      }
    }
    if (mismatch !== undefined) {
      for (const call of batch) {
        call.reject(
          new InconsistentDataError(
            `inconsistent provider data: the answer does not match the request ids (${mismatch})`,
            { method: call.method },
          ),
        );
      }
      return;
    }
    for (const call of batch) {
      const item = byId.get(call.id);
      if (!isRecord(item)) {
        call.reject(
          classify(new MalformedResponseError(`no response for JSON-RPC id ${call.id}`), call.method),
        );
      } else if (item.error !== undefined && item.error !== null) {
        call.reject(classify(item.error, call.method));
      } else if ("result" in item) {
        call.resolve(item.result);
      } else {
        call.reject(
          classify(new MalformedResponseError("response has neither result nor error"), call.method),
        );
      }
    }
  }

  async function send(batch: Pending[]): Promise<void> {
    for (const call of batch) options.onSend?.(call.method);
    const payload = batch.map((call) => ({
      jsonrpc: "2.0",
      id: call.id,
      method: call.method,
      params: call.params,
    }));
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const response = await fetch(fetchUrl, {
        method: "POST",
        headers,
        body: JSON.stringify(payload.length === 1 ? payload[0] : payload),
        signal: AbortSignal.any([signal, timeout]),
      });
      const text = await response.text();
      if (!response.ok) throw new HttpStatusError(response.status, response.headers, text);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new MalformedResponseError(`response is not JSON: ${text.slice(0, 100)}`);
      }
      settle(batch, parsed);
    } catch (error) {
      for (const call of batch) {
        if (signal.aborted) call.reject(aborted(call.method));
        else if (timeout.aborted) {
          const timedOut = Object.assign(new Error(`no response within ${timeoutMs} ms`), {
            name: "TimeoutError",
          });
          call.reject(classify(timedOut, call.method));
        } else call.reject(classify(error, call.method));
      }
    }
  }

  function flush(): void {
    clearTimeout(timer);
    timer = undefined;
    while (queue.length > 0) {
      const batch = queue.slice(0, batchSize);
      queue = queue.slice(batchSize);
      void send(batch);
    }
  }

  return {
    label,
    async request(method, params) {
      if (signal.aborted) throw aborted(method);
      if (bucket) {
        try {
          await bucket.take(signal);
        } catch {
          throw aborted(method);
        }
      }
      return new Promise((resolve, reject) => {
        queue.push({ id: nextId++, method, params, resolve, reject });
        // Calls made in the same tick share an HTTP request (viem's `batch: { wait: 0 }` behaviour).
        if (queue.length >= batchSize) flush();
        else timer ??= setTimeout(flush, 0);
      });
    },
    close() {
      closer.abort();
      clearTimeout(timer);
      timer = undefined;
      const dropped = queue;
      queue = [];
      for (const call of dropped) call.reject(aborted(call.method));
    },
  };
}
