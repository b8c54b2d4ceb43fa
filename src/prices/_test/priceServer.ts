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

export type PriceServerRequest = { provider: "alchemy" | "defillama"; path: string; tokens: string[] };

/**
 * A local HTTP server speaking the documented formats of the two price APIs protoscan supports, standing in
 * for the SaaS in tests:
 * - Alchemy Prices `POST /prices/v1/{apiKey}/tokens/by-address` with `{"addresses":[{"network","address"}]}`
 *   -> `{"data":[{"network","address","prices":[{"currency":"usd","value":"…","lastUpdatedAt":"…"}],"error":null}]}`
 *   (an unknown token gets `prices: []` and an `error`, as Alchemy does; a wrong key gets 401);
 * - DefiLlama `GET /prices/current/{chain}:{address},…`
 *   -> `{"coins":{"{chain}:{address}":{"decimals","symbol","price","timestamp","confidence"}}}` (unknown coins
 *   are left out).
 * `down` makes every call answer 500. Every call is recorded with the tokens it asked for.
 */
export type PriceServer = {
  url: string;
  requests: PriceServerRequest[];
  quotes: Map<string, FakeQuote>;
  set(address: string, quote: FakeQuote): void;
  down: boolean;
  close(): Promise<void>;
};

export async function startPriceServer(options: { apiKey?: string } = {}): Promise<PriceServer> {
  const quotes = new Map<string, FakeQuote>();
  const requests: PriceServerRequest[] = [];
  const state = { down: false };

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
    if (req.method === "POST" && alchemyPath) {
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
    get down() {
      return state.down;
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
