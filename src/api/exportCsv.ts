import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";
import { type CsvValue, csvRow } from "./csvRow.ts";

/** Rows read from the store per statement while an export streams. */
export const EXPORT_PAGE_ROWS = 1_000;

/**
 * Send a CSV file (SPEC §10.4): its header row, then each page `pages` yields as it is read, so the server
 * holds one page at a time and the socket's backpressure paces the reads (a `Readable` pulls the next page
 * only when the previous one has been written). Whatever can fail with a 4xx is checked before this is called:
 * once the header is sent, a failure can only cut the connection.
 */
export function sendCsv(
  reply: FastifyReply,
  filename: string,
  header: readonly string[],
  pages: AsyncIterable<readonly CsvValue[][]>,
): FastifyReply {
  async function* text() {
    yield csvRow(header);
    for await (const rows of pages) {
      let chunk = "";
      for (const row of rows) chunk += csvRow(row);
      if (chunk.length > 0) yield chunk;
    }
  }
  return reply
    .header("content-type", "text/csv; charset=utf-8")
    .header("content-disposition", `attachment; filename="${filename}"`)
    .send(Readable.from(text(), { objectMode: false, highWaterMark: 64 * 1024 }));
}
