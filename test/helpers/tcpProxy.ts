import { createServer, Socket } from "node:net";

export type TcpProxy = {
  /** the port the proxy listens on (127.0.0.1) */
  port: number;
  /**
   * Play a database outage: every open connection is destroyed and new ones are closed as soon as they
   * arrive (the client sees its connection reset, like a stopped server), until `restore`.
   */
  cut(): void;
  /** Forward new connections again. */
  restore(): void;
  /** connections forwarded and still open */
  readonly open: number;
  close(): Promise<void>;
};

/**
 * A TCP proxy to `upstreamPort` on 127.0.0.1 that a test can cut and restore, so it can take a database away
 * from protoscan processes without stopping the shared PostgreSQL server other tests use.
 */
export async function startTcpProxy(upstreamPort: number, upstreamHost = "127.0.0.1"): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let cut = false;
  const server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
    upstream.connect(upstreamPort, upstreamHost, () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");
  return {
    port: address.port,
    cut() {
      cut = true;
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
    },
    restore() {
      cut = false;
    },
    get open() {
      return pairs.size;
    },
    close() {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
