/** What streaming one CSV export cost the server (this process): time, rows, bytes and peak RSS. */
export type ExportMeasure = {
  rows: number;
  bytes: number;
  seconds: number;
  rowsPerSecond: number;
  /** the server's RSS just before the request, and its highest sample (every 20 ms) until the last byte */
  rssBeforeMb: number;
  peakRssMb: number;
};

/**
 * GET `origin + path` and read the CSV as it streams, counting its rows (CRLF-terminated records after the
 * header; the bench's fields hold no line breaks), while sampling the server's RSS with `serverRssMb` (by
 * default this process's: the server runs here, and the client keeps only the current chunk).
 */
export async function measureExport(
  origin: string,
  path: string,
  serverRssMb: () => number = () => process.memoryUsage.rss() / 2 ** 20,
): Promise<ExportMeasure> {
  const rssBefore = serverRssMb();
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, serverRssMb());
  }, 20);
  const started = performance.now();
  try {
    const response = await fetch(`${origin}${path}`);
    if (response.status !== 200 || !response.body) {
      throw new Error(`GET ${path}: ${response.status} ${(await response.text()).slice(0, 300)}`);
    }
    let lines = 0;
    let bytes = 0;
    const decoder = new TextDecoder();
    for await (const chunk of response.body) {
      bytes += chunk.byteLength;
      const text = decoder.decode(chunk, { stream: true });
      for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
    }
    const seconds = (performance.now() - started) / 1000;
    peak = Math.max(peak, serverRssMb());
    const rows = Math.max(0, lines - 1);
    return {
      rows,
      bytes,
      seconds,
      rowsPerSecond: rows / seconds,
      rssBeforeMb: rssBefore,
      peakRssMb: peak,
    };
  } finally {
    clearInterval(sampler);
  }
}
