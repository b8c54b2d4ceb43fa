import type { Static } from "typebox";
import type {
  AddressTransactionsPageSchema,
  AddressViewSchema,
  ProtocolTransactionsPageSchema,
} from "../src/api/schemas/address.ts";
import type { ProtocolListJson } from "../src/api/schemas/protocol.ts";
import type { SearchResponseSchema } from "../src/api/schemas/search.ts";
import type { OverviewSchema, ProtocolStatsJson } from "../src/api/schemas/stats.ts";
import type {
  HoldersPageSchema,
  TokenDetailJson,
  TokenListSchema,
  TransferEventsPageSchema,
} from "../src/api/schemas/tokenResponses.ts";
import type { TransactionJson } from "../src/api/schemas/transaction.ts";

/**
 * The one place that calls protoscan's HTTP API and its WebSocket (STYLE.md, "The web app"). Response types
 * come from the server's own schemas (src/api/schemas/); only the history endpoints of SPEC §10, which this
 * server may not have yet, are typed here from the SPEC.
 */

/** A Transaction, with `valueUsd` (SPEC §10.2) where the server has it. */
export type Tx = TransactionJson & { valueUsd?: number | null };
export type Overview = Static<typeof OverviewSchema>;
export type AddressView = Static<typeof AddressViewSchema>;
export type TxPage = { transactions: Tx[]; nextCursor: string | null };
export type HoldersPage = Static<typeof HoldersPageSchema>;
export type TransfersPage = Static<typeof TransferEventsPageSchema>;
export type SearchResponse = Static<typeof SearchResponseSchema>;
export type SearchResult = SearchResponse["results"][number];
export type TokenList = Static<typeof TokenListSchema>;
export type { ProtocolListJson, ProtocolStatsJson, TokenDetailJson };
export type ProtocolPage = Static<typeof ProtocolTransactionsPageSchema>;
export type AddressPage = Static<typeof AddressTransactionsPageSchema>;

/** SPEC §10.3: a bucket of `GET /api/stats/history` and `/api/protocol/:id/history`. */
export type HistoryPoint = {
  time: string;
  transactionCount: number;
  uniqueUsers: number;
  volumeUsd: number;
  tvlUsd?: number | null;
};
export type History = { interval: "hour" | "day"; from: string; to: string; points: HistoryPoint[] };
/** SPEC §10.1 */
export type PriceHistory = {
  interval: "hour" | "day";
  points: { time: string; priceUsd: number | null; source: string | null }[];
};

/** A failed request: the problem+json `code` and `detail` when the server sent them. */
export class RequestError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function get<T>(path: string, signal?: AbortSignal): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, { headers: { accept: "application/json" }, ...(signal && { signal }) });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new RequestError(0, "NETWORK", "the server could not be reached");
  }
  if (!response.ok) {
    let code = "HTTP";
    let message = `the server answered ${response.status}`;
    try {
      const problem = (await response.json()) as { code?: string; detail?: string };
      code = problem.code ?? code;
      message = problem.detail ?? message;
    } catch {
      // not a problem+json body: the status says enough
    }
    throw new RequestError(response.status, code, message);
  }
  return (await response.json()) as T;
}

const q = (params: Record<string, string | number | null | undefined>): string => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
};
const seg = encodeURIComponent;

export const api = {
  overview: (signal?: AbortSignal) => get<Overview>("/api/overview", signal),
  protocols: () => get<ProtocolListJson>("/api/protocols"),
  tokens: () => get<TokenList>("/api/tokens"),
  recent: (limit: number, signal?: AbortSignal) =>
    get<{ transactions: Tx[] }>(`/api/transactions/recent${q({ limit })}`, signal),
  tx: (hash: string) => get<Tx>(`/api/tx/${seg(hash)}`),
  address: (address: string) => get<AddressView>(`/api/address/${seg(address)}`),
  addressTransactions: (address: string, cursor: string | null, protocol: string | null) =>
    get<TxPage>(`/api/address/${seg(address)}/transactions${q({ cursor, protocol })}`),
  token: (address: string) => get<TokenDetailJson>(`/api/tokens/${seg(address)}`),
  holders: (address: string, offset: number, limit = 25) =>
    get<HoldersPage>(`/api/tokens/${seg(address)}/holders${q({ offset, limit })}`),
  transfers: (address: string, cursor: string | null, party: string | null) =>
    get<TransfersPage>(`/api/tokens/${seg(address)}/events${q({ cursor, address: party })}`),
  protocolStats: (id: string) => get<ProtocolStatsJson>(`/api/protocol/${seg(id)}/stats`),
  protocolTransactions: (id: string, cursor: string | null, actionType: string | null) =>
    get<TxPage>(`/api/protocol/${seg(id)}/transactions${q({ cursor, actionType })}`),
  search: (text: string) => get<SearchResponse>(`/api/search${q({ q: text })}`),
  statsHistory: (interval: "hour" | "day", from: string) =>
    get<History>(`/api/stats/history${q({ interval, from })}`),
  protocolHistory: (id: string, interval: "hour" | "day", from: string) =>
    get<History>(`/api/protocol/${seg(id)}/history${q({ interval, from })}`),
  priceHistory: (address: string, interval: "hour" | "day", from: string) =>
    get<PriceHistory>(`/api/tokens/${seg(address)}/price-history${q({ interval, from })}`),
};

/** Download links (SPEC §10.4): plain same-origin URLs the browser saves. */
export const csv = {
  addressTransactions: (address: string) => `/api/address/${seg(address)}/transactions.csv`,
  addressTransfers: (address: string) => `/api/address/${seg(address)}/transfers.csv`,
  tokenEvents: (address: string) => `/api/tokens/${seg(address)}/events.csv`,
  tokenHolders: (address: string) => `/api/tokens/${seg(address)}/holders.csv`,
};

export type FeedState = "connecting" | "live" | "reconnecting";

export type LiveFeedOptions = {
  topic: string;
  onTransaction(tx: Tx): void;
  /** a transaction dropped by a reorg (SPEC §5 `removed`) */
  onRemoved(txHash: string): void;
  /** the newest transactions, polled while the socket is down (newest first) */
  onPoll(txs: Tx[]): void;
  onState(state: FeedState): void;
  pollMs?: number;
};

/**
 * Follow a WebSocket topic (SPEC §5). While the socket is refused or closed, poll the newest transactions
 * every `pollMs` (2 s) and try the socket again with a growing delay (1 s up to 30 s). Returns a stop function.
 */
export function followLive(options: LiveFeedOptions): () => void {
  const pollMs = options.pollMs ?? 2_000;
  let stopped = false;
  let socket: WebSocket | null = null;
  let retryMs = 1_000;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let pollTimer: ReturnType<typeof setInterval> | undefined;

  const startPolling = () => {
    if (pollTimer !== undefined || stopped) return;
    const poll = () =>
      api.recent(25).then(
        (r) => !stopped && options.onPoll(r.transactions),
        () => undefined,
      );
    void poll();
    pollTimer = setInterval(poll, pollMs);
  };
  const stopPolling = () => {
    clearInterval(pollTimer);
    pollTimer = undefined;
  };

  const connect = () => {
    if (stopped) return;
    options.onState(socket === null ? "connecting" : "reconnecting");
    const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws`;
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => ws.send(JSON.stringify({ op: "subscribe", topic: options.topic, id: 1 }));
    ws.onmessage = (event) => {
      let message: { type?: string; data?: Tx & { txHash: string } };
      try {
        message = JSON.parse(String(event.data));
      } catch {
        return;
      }
      if (message.type === "subscribed") {
        retryMs = 1_000;
        stopPolling();
        options.onState("live");
      } else if (message.type === "transaction" && message.data) {
        options.onTransaction(message.data);
      } else if (message.type === "removed" && message.data) {
        options.onRemoved(message.data.txHash);
      }
    };
    ws.onclose = () => {
      if (stopped) return;
      options.onState("reconnecting");
      startPolling();
      retryTimer = setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 30_000);
    };
  };
  connect();
  return () => {
    stopped = true;
    clearTimeout(retryTimer);
    stopPolling();
    socket?.close();
  };
}
