import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the fake provider knows about one token. */
export type FakeQuote = {
  usd: number;
  /** when the price was true (default: the moment of the request) */
  at?: Date;
  /** DefiLlama's confidence (default 0.99) */
  confidence?: number;
  /** Alchemy: answer this entry with an `error` instead of prices */
  error?: string;
};

export type PriceServerRequest = {
  provider: "alchemy" | "defillama";
  path: string;
  tokens: string[];
  /** historical calls: the range asked (unix seconds) */
  range?: { start: number; end: number };
};

/** A token's hourly history: its USD price at each hour start (unix seconds), undefined where it has none. */
export type FakeHistory = (hour: number) => number | undefined;

/**
 * A local HTTP server speaking the documented formats of the two price APIs protoscan supports, standing in
 * for the SaaS in tests:
 * - Alchemy Prices `POST /prices/v1/{apiKey}/tokens/by-address` with `{"addresses":[{"network","address"}]}`
 *   -> `{"data":[{"network","address","prices":[{"currency":"usd","value":"…","lastUpdatedAt":"…"}],"error":null}]}`
 *   (an unknown token gets `prices: []` and an `error`, as Alchemy does; a wrong key gets 401);
 * - DefiLlama `GET /prices/current/{chain}:{address},…`
 *   -> `{"coins":{"{chain}:{address}":{"decimals","symbol","price","timestamp","confidence"}}}` (unknown coins
 *   are left out).
 * - Alchemy `POST /prices/v1/{apiKey}/tokens/historical` with `{"network","address","startTime","endTime","interval":"1h"}`
 *   -> `{"network","address","currency":"usd","data":[{"value":"…","timestamp":"…"}]}` (hours in [start, end]);
 * - DefiLlama `GET /chart/{chain}:{address}?start&span&period=1h`
 *   -> `{"coins":{"{chain}:{address}":{"symbol","decimals","confidence","prices":[{"timestamp","price"}]}}}`.
 * `down` makes every call answer 500; `delayMs` delays every historical answer. Every call is recorded with
 * the tokens it asked for.
 */
export type PriceServer = {
  url: string;
  requests: PriceServerRequest[];
  quotes: Map<string, FakeQuote>;
  set(address: string, quote: FakeQuote): void;
  /** hourly histories by lowercase address */
  history: Map<string, FakeHistory>;
  down: boolean;
  delayMs: number;
  close(): Promise<void>;
};

export async function startPriceServer(options: { apiKey?: string } = {}): Promise<PriceServer> {
  const quotes = new Map<string, FakeQuote>();
  const history = new Map<string, FakeHistory>();
  const requests: PriceServerRequest[] = [];
  const state = { down: false, delayMs: 0 };
  const HOUR = 3600;
  /** the hour starts in [start, end] (unix seconds) at which `token` has a price */
  const hours = (token: string, start: number, end: number) => {
    const out: { t: number; usd: number }[] = [];
    const fn = history.get(token);
    for (let t = Math.ceil(start / HOUR) * HOUR; fn && t <= end; t += HOUR) {
      const usd = fn(t);
      if (usd !== undefined) out.push({ t, usd });
    }
    return out;
  };

  const alchemyHistorical = async (req: IncomingMessage, res: ServerResponse, key: string) => {
    const body = JSON.parse(await readBody(req)) as {
      network: string;
      address: string;
      startTime: string | number;
      endTime: string | number;
      interval: string;
    };
    const seconds = (v: string | number) => (typeof v === "number" ? v : Date.parse(v) / 1000);
    const range = { start: seconds(body.startTime), end: seconds(body.endTime) };
    requests.push({ provider: "alchemy", path: req.url ?? "", tokens: [body.address.toLowerCase()], range });
    await new Promise((resolve) => setTimeout(resolve, state.delayMs));
    if (state.down) return send(res, 500, { error: { message: "internal error" } });
    if (options.apiKey !== undefined && key !== options.apiKey) {
      return send(res, 401, { error: { message: "Must be authenticated!" } });
    }
    if (body.interval !== "1h") return send(res, 400, { error: { message: "unsupported interval" } });
    send(res, 200, {
      network: body.network,
      address: body.address,
      currency: "usd",
      data: hours(body.address.toLowerCase(), range.start, range.end).map(({ t, usd }) => ({
        value: usd.toFixed(8),
        timestamp: new Date(t * 1000).toISOString(),
      })),
    });
  };

  const defillamaChart = async (req: IncomingMessage, res: ServerResponse, coinList: string, url: URL) => {
    const coins = decodeURIComponent(coinList).split(",");
    const start = Number(url.searchParams.get("start"));
    const span = Number(url.searchParams.get("span") ?? "0");
    const range = { start, end: start + (span - 1) * HOUR };
    const tokens = coins.map((c) => c.slice(c.indexOf(":") + 1).toLowerCase());
    requests.push({ provider: "defillama", path: req.url ?? "", tokens, range });
    await new Promise((resolve) => setTimeout(resolve, state.delayMs));
    if (state.down) return send(res, 500, { message: "internal error" });
    if (url.searchParams.get("period") !== "1h") return send(res, 400, { message: "unsupported period" });
    const out: Record<string, unknown> = {};
    coins.forEach((coin, i) => {
      const points = hours(tokens[i]!, range.start, range.end);
      if (points.length === 0) return;
      out[coin] = {
        symbol: "TKN",
        decimals: 18,
        confidence: 0.99,
        prices: points.map(({ t, usd }) => ({ timestamp: t, price: usd })),
      };
    });
    send(res, 200, { coins: out });
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

  const alchemy = async (req: IncomingMessage, res: ServerResponse, key: string) => {
    const raw = await readBody(req);
    const body = JSON.parse(raw) as { addresses: { network: string; address: string }[] };
    requests.push({
      provider: "alchemy",
      path: req.url ?? "",
      tokens: body.addresses.map((a) => a.address.toLowerCase()),
    });
    if (state.down) return send(res, 500, { error: { message: "internal error" } });
    if (options.apiKey !== undefined && key !== options.apiKey) {
      return send(res, 401, { error: { message: "Must be authenticated!" } });
    }
    if (body.addresses.length > 25) return send(res, 400, { error: { message: "Too many addresses" } });
    send(res, 200, {
      data: body.addresses.map(({ network, address }) => {
        const quote = quotes.get(address.toLowerCase());
        if (!quote || quote.error !== undefined) {
          return { network, address, prices: [], error: quote?.error ?? "Token not found" };
        }
        return {
          network,
          address,
          prices: [
            {
              currency: "usd",
              value: quote.usd.toFixed(8),
              lastUpdatedAt: (quote.at ?? new Date()).toISOString(),
            },
          ],
          error: null,
        };
      }),
    });
  };

  const defillama = (req: IncomingMessage, res: ServerResponse, coinList: string) => {
    const coins = decodeURIComponent(coinList).split(",");
    requests.push({
      provider: "defillama",
      path: req.url ?? "",
      tokens: coins.map((c) => c.slice(c.indexOf(":") + 1).toLowerCase()),
    });
    if (state.down) return send(res, 500, { message: "internal error" });
    const out: Record<string, unknown> = {};
    for (const coin of coins) {
      const quote = quotes.get(coin.slice(coin.indexOf(":") + 1).toLowerCase());
      if (!quote || quote.error !== undefined) continue;
      out[coin] = {
        decimals: 18,
        symbol: "TKN",
        price: quote.usd,
        timestamp: Math.floor((quote.at ?? new Date()).getTime() / 1000),
        confidence: quote.confidence ?? 0.99,
      };
    }
    send(res, 200, { coins: out });
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const alchemyPath = /^\/prices\/v1\/([^/]+)\/tokens\/by-address$/.exec(url.pathname);
    const llamaPath = /^\/prices\/current\/(.+)$/.exec(url.pathname);
    const alchemyHistoryPath = /^\/prices\/v1\/([^/]+)\/tokens\/historical$/.exec(url.pathname);
    const llamaChartPath = /^\/chart\/(.+)$/.exec(url.pathname);
    if (req.method === "POST" && alchemyHistoryPath) {
      alchemyHistorical(req, res, decodeURIComponent(alchemyHistoryPath[1]!)).catch(() =>
        send(res, 400, { error: "bad body" }),
      );
    } else if (req.method === "GET" && llamaChartPath) {
      void defillamaChart(req, res, llamaChartPath[1]!, url);
    } else if (req.method === "POST" && alchemyPath) {
      alchemy(req, res, decodeURIComponent(alchemyPath[1]!)).catch(() =>
        send(res, 400, { error: "bad body" }),
      );
    } else if (req.method === "GET" && llamaPath) {
      defillama(req, res, llamaPath[1]!);
    } else {
      send(res, 404, { error: "not found" });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    quotes,
    set(address, quote) {
      quotes.set(address.toLowerCase(), quote);
    },
    history,
    get down() {
      return state.down;
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(value: number) {
      state.delayMs = value;
    },
    set down(value: boolean) {
      state.down = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
