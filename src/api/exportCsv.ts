import { Readable } from "node:stream";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type {
  FastifyReply,
  FastifyRequest,
  RawRequestDefaultExpression,
  RouteGenericInterface,
} from "fastify";
import Type, { type TObject } from "typebox";
import type { RouteApp } from "./appDeps.ts";
import { type CsvValue, csvRow } from "./csvRow.ts";
import { AddressParam, ProblemSchema } from "./schemas/common.ts";

/** Rows read from the store per statement while an export streams. */
export const EXPORT_PAGE_ROWS = 1_000;

/** One page of a CSV file: its rows, each a list of values in the file's column order. */
export type CsvPage = readonly CsvValue[][];

/** A CSV file ready to stream: its name, and its rows as pages read on demand. */
export type CsvFile = { filename: string; pages: AsyncIterable<CsvPage> };

/**
 * A CSV export of an address or a token (SPEC §10.4): the route `/api/…/:address/….csv`, described by what
 * differs from one export to the next.
 */
export type CsvExport<Q extends TObject> = {
  url: `/api/${string}/:address/${string}.csv`;
  operationId: string;
  summary: string;
  columns: readonly string[];
  /** the query it takes */
  querystring: Q;
  /** it reads the chain before its first row, and answers 503 when that fails */
  readsChain?: boolean;
  /**
   * Check whatever can fail with a 4xx (a problem+json answer), the row limit included, then open the file:
   * nothing is sent before this resolves, and once the header is sent a failure can only cut the connection.
   */
  open: (address: string, query: ExportRequest<Q>["query"]) => Promise<CsvFile>;
};

/** The route schema of a CSV export: its query's type comes from it, through the TypeBox type provider. */
type ExportSchema<Q extends TObject> = {
  operationId: string;
  summary: string;
  tags: string[];
  params: typeof AddressParams;
  querystring: Q;
  response: Record<number, unknown>;
};

type ExportRequest<Q extends TObject> = FastifyRequest<
  RouteGenericInterface,
  RouteApp["server"],
  RawRequestDefaultExpression,
  ExportSchema<Q>,
  TypeBoxTypeProvider
>;

const AddressParams = Type.Object({ address: AddressParam });
const CsvText = Type.String({
  description: "RFC 4180 CSV: a header row, then one row per item, CRLF line ends",
});

/** Register `spec`'s route: its request and response schemas, and a handler that opens then streams its file. */
export function registerCsvExport<Q extends TObject>(app: RouteApp, spec: CsvExport<Q>): void {
  const schema: ExportSchema<Q> = {
    operationId: spec.operationId,
    summary: spec.summary,
    tags: ["exports"],
    params: AddressParams,
    querystring: spec.querystring,
    response: {
      200: {
        description: `columns ${spec.columns.join(",")}`,
        content: { "text/csv": { schema: CsvText } },
      },
      400: ProblemSchema,
      404: ProblemSchema,
      ...(spec.readsChain ? { 503: ProblemSchema } : {}),
    },
  };
  app.get(spec.url, { schema }, async (request, reply) => {
    const file = await spec.open(request.params.address, request.query);
    return sendCsv(reply, file.filename, spec.columns, file.pages);
  });
}

/** Which page of a keyset read: the rows after the key `after` (from the start without one), `limit` at most. */
export type KeysetPage<Key> = { after: Key | undefined; limit: number };

/**
 * The rows `read` gives page after page (EXPORT_PAGE_ROWS at most), each page read after the key of the
 * previous page's last row (keyset pagination), until a page comes back short.
 */
export async function* keysetPages<Row, Key>(
  read: (page: KeysetPage<Key>) => Promise<Row[]>,
  keyOf: (last: Row) => Key,
): AsyncGenerator<Row[]> {
  let after: Key | undefined;
  for (;;) {
    const rows = await read({ after, limit: EXPORT_PAGE_ROWS });
    const last = rows.at(-1);
    if (!last) return;
    yield rows;
    if (rows.length < EXPORT_PAGE_ROWS) return;
    after = keyOf(last);
  }
}

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
  pages: AsyncIterable<CsvPage>,
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
