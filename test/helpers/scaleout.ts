import { randomBytes } from "node:crypto";
import pg from "pg";
import WebSocket from "ws";

/** A fresh, empty database on the PostgreSQL server of `serverUrl` (not migrated: protoscan does it). */
export type ServerDatabase = {
  /** the URL protoscan processes get as DATABASE_URL */
  url: string;
  name: string;
  /** Run one query on it (a short-lived connection of the test, not through any proxy). */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  /** Terminate every session and drop it. Idempotent. */
  drop(): Promise<void>;
};

export async function createServerDatabase(serverUrl: string): Promise<ServerDatabase> {
  const name = `protoscan_test_${randomBytes(6).toString("hex")}`;
  await admin(serverUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let dropping: Promise<void> | undefined;
  return {
    url: url.toString(),
    name,
    async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []) {
      const client = new pg.Client({ connectionString: url.toString(), application_name: "protoscan-test" });
      await client.connect();
      try {
        return (await client.query<R>(text, values)).rows;
      } finally {
        await client.end();
      }
    },
    drop() {
      dropping ??= admin(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      return dropping;
    },
  };
}

/** `url` with its host and port replaced (a database URL pointed at a proxy). */
export function viaPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.hostname = "127.0.0.1";
  parsed.port = String(port);
  return parsed.toString();
}

async function admin(serverUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl, application_name: "protoscan-test" });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** One `transaction` (or `removed`) message as a WebSocket client received it. */
export type WsEvent = { type: string; txHash: string; blockNumber: number; transactionIndex: number };

/** A WebSocket client subscribed to `transactions`, keeping every broadcast it receives. */
export type WsCollector = {
  events: WsEvent[];
  /** resolves with the close code when the server closes the connection */
  closed: Promise<number>;
  close(): void;
};

/** Connect to `GET /ws` of `apiUrl` and subscribe to every transaction; resolves once subscribed. */
export async function collectTransactions(apiUrl: string): Promise<WsCollector> {
  const ws = new WebSocket(`${apiUrl.replace(/^http/, "ws")}/ws`);
  const events: WsEvent[] = [];
  const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
  const subscribed = new Promise<void>((resolve, reject) => {
    ws.on("error", reject);
    ws.on("message", (raw) => {
      const message = JSON.parse(String(raw)) as {
        type: string;
        data?: { txHash: string; blockNumber: number; transactionIndex?: number };
      };
      if (message.type === "subscribed") resolve();
      if ((message.type === "transaction" || message.type === "removed") && message.data) {
        events.push({
          type: message.type,
          txHash: message.data.txHash,
          blockNumber: message.data.blockNumber,
          transactionIndex: message.data.transactionIndex ?? -1,
        });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  ws.send(JSON.stringify({ op: "subscribe", topic: "transactions", id: 1 }));
  await subscribed;
  return { events, closed, close: () => ws.close() };
}

/** GET `${baseUrl}/metrics` as text. */
export async function scrape(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`/metrics answered ${response.status}`);
  return response.text();
}

/**
 * The value of one series in Prometheus text (`name{labels} value`), or undefined when absent. `labels`
 * must match exactly the series' own labels, in any order.
 */
export function metricValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(",");
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? "")
      .split(/,(?=[a-zA-Z_]\w*=")/)
      .filter((part) => part !== "")
      .sort()
      .join(",");
    if (have === wanted) return Number(match[3]);
  }
  return undefined;
}

/** GET a JSON document, or null when the server does not answer 2xx (or at all). */
export async function getJson(
  url: string,
): Promise<{ status: number; body: Record<string, unknown> } | null> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  } catch {
    return null;
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll `check` every 100 ms until it returns a value other than undefined/false; throws after `timeoutMs`. */
export async function until<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/**
 * Run a test body over child processes; when it fails, the error carries the tail of each one's output (a
 * crash or a stuck process explains itself).
 */
export async function withOutputs(
  children: readonly { output(): string; pid: number }[],
  body: () => Promise<void>,
): Promise<void> {
  try {
    await body();
  } catch (error) {
    const outputs = children.map((c) => `--- pid ${c.pid} ---\n${c.output().slice(-3000)}`).join("\n");
    if (error instanceof Error) error.message = `${error.message}\n${outputs}`;
    throw error;
  }
}
