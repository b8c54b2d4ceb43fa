import Type from "typebox";
import { formatUnits } from "viem";
import type { Address, TokenConfig } from "../../config/schema.ts";
import type { Common } from "../../internal/common.ts";
import { transferValueUsd } from "../../prices/transactionValues.ts";
import {
  type BlockBounds,
  blockBoundsOfTimes,
  countAddressTransactionsExport,
  countHoldersExport,
  countTransfersExport,
  type ExportTransfer,
  getAddressTransactionsExport,
  getHoldersExport,
  getTransfersExport,
  getTransfersOfTransactions,
  type HolderPosition,
  type TransactionPosition,
  type TransferPosition,
  type TransfersExport,
} from "../../store/exportReads.ts";
import type { RouteApp, RouteDeps } from "../appDeps.ts";
import { createTotalSupplyReader } from "../createTotalSupplyReader.ts";
import type { CsvValue } from "../csvRow.ts";
import { ApiError } from "../errorRegistry.ts";
import { EXPORT_PAGE_ROWS, sendCsv } from "../exportCsv.ts";
import { parseTime } from "../historyRange.ts";
import { AddressParam, BlockNumberParam, ProblemSchema } from "../schemas/common.ts";
import { checksum } from "../toTransactionJson.ts";

/** Rows one file holds at most (SPEC §10.4). */
export const EXPORT_MAX_ROWS = 1_000_000;

export const TRANSACTION_COLUMNS = [
  "txHash",
  "blockNumber",
  "blockTimestamp",
  "fromAddress",
  "toAddress",
  "protocol",
  "actionType",
  "functionName",
  "status",
  "valueWei",
  "gasUsed",
  "gasPrice",
  "feeWei",
  "valueUsd",
] as const;
export const ADDRESS_TRANSFER_COLUMNS = [
  "txHash",
  "logIndex",
  "blockNumber",
  "blockTimestamp",
  "tokenAddress",
  "tokenSymbol",
  "fromAddress",
  "toAddress",
  "direction",
  "amount",
  "decimals",
  "amountDecimal",
  "priceUsd",
  "valueUsd",
] as const;
export const TOKEN_EVENT_COLUMNS = [
  "txHash",
  "logIndex",
  "blockNumber",
  "blockTimestamp",
  "fromAddress",
  "toAddress",
  "amount",
  "decimals",
  "amountDecimal",
  "priceUsd",
  "valueUsd",
] as const;
export const HOLDER_COLUMNS = ["rank", "address", "balance", "balanceDecimal", "share"] as const;

const AddressParams = Type.Object({ address: AddressParam });
const Time = (description: string) =>
  Type.String({ maxLength: 64, description: `${description}: ISO 8601 or unix seconds, inclusive` });
const CsvFile = Type.String({
  description: "RFC 4180 CSV: a header row, then one row per item, CRLF line ends",
});
const csvResponse = (description: string) => ({
  description,
  content: { "text/csv": { schema: CsvFile } },
});

/**
 * The CSV exports (SPEC §10.4, docs/api.md "Exports"): an address's transactions and tracked-token transfers,
 * a token's transfers and its holders, oldest first (holders by rank), with the JSON endpoints' values.
 * Everything that can fail with a 4xx, the row limit included (a capped count), is checked before the header
 * is sent; rows then stream in pages read by keyset (`store/exportReads.ts`), priced at block time in one
 * batch per page.
 */
export function registerExportRoutes(app: RouteApp, common: Common, deps: RouteDeps) {
  const db = deps.database.db;
  const maxRows = deps.exportMaxRows ?? EXPORT_MAX_ROWS;
  const tokens = new Map(common.config.tokens.map((t) => [t.address as string, t]));
  const protocols = new Set(common.config.protocols.map((p) => p.id));
  const supply = createTotalSupplyReader({
    chain: deps.chain,
    logger: common.logger.child({ module: "api" }),
  });

  const trackedToken = (address: string): TokenConfig => {
    const token = tokens.get(address.toLowerCase());
    if (!token) throw new ApiError("TOKEN_NOT_TRACKED", `${checksum(address)} is not a tracked token`);
    return token;
  };

  /** A file's row count must be known to be within the limit before its first row. */
  const checkRowCount = (count: number) => {
    if (count > maxRows) {
      throw new ApiError(
        "INVALID_PARAMETER",
        `from: more than ${maxRows} rows; ask for a narrower range (from/to, or fromBlock/toBlock)`,
      );
    }
  };

  /** `from`/`to` as a block range; null when no stored block is in it (an empty file). */
  const timeBounds = async (query: { from?: string; to?: string }): Promise<BlockBounds | null> => {
    const from = query.from === undefined ? undefined : parseTime("from", query.from);
    const to = query.to === undefined ? undefined : parseTime("to", query.to);
    if (from && to && from.getTime() > to.getTime())
      throw new ApiError("INVALID_PARAMETER", "from: must not be after to");
    return blockBoundsOfTimes(db, from, to);
  };

  /** USD per whole token at each transfer's block time (null: no price then), as the JSON endpoints price it. */
  const pricesOf = async (rows: readonly ExportTransfer[]): Promise<(number | null)[]> =>
    (
      await deps.history.pricesAt(
        rows.map((r) => ({ token: r.tokenAddress, time: r.blockTimestamp, blockNumber: r.blockNumber })),
      )
    ).map((p) => p?.usd ?? null);

  const usdOf = (row: ExportTransfer, price: number | null | undefined): number | null => {
    const token = tokens.get(row.tokenAddress);
    if (!token || price === null || price === undefined) return null;
    return transferValueUsd(row.amount, token.decimals, price);
  };

  async function* transferPages(query: TransfersExport) {
    let after: TransferPosition | undefined;
    for (;;) {
      const rows = await getTransfersExport(db, query, { after, limit: EXPORT_PAGE_ROWS });
      const last = rows.at(-1);
      if (!last) return;
      yield { rows, prices: await pricesOf(rows) };
      if (rows.length < EXPORT_PAGE_ROWS) return;
      after = { blockNumber: last.blockNumber, logIndex: last.logIndex };
    }
  }

  app.get(
    "/api/address/:address/transactions.csv",
    {
      schema: {
        operationId: "exportAddressTransactions",
        summary: "CSV of the transactions an address takes part in, oldest first",
        tags: ["exports"],
        params: AddressParams,
        querystring: Type.Object(
          {
            protocol: Type.Optional(
              Type.String({ minLength: 1, maxLength: 64, description: "only this protocol" }),
            ),
            from: Type.Optional(Time("first block time")),
            to: Type.Optional(Time("last block time")),
          },
          { additionalProperties: false },
        ),
        response: {
          200: csvResponse(`columns ${TRANSACTION_COLUMNS.join(",")}`),
          400: ProblemSchema,
          404: ProblemSchema,
        },
      },
    },
    async (request, reply) => {
      const address = request.params.address.toLowerCase();
      const query = request.query;
      const protocol = query.protocol?.toLowerCase();
      if (protocol !== undefined && !protocols.has(protocol)) {
        throw new ApiError("PROTOCOL_NOT_FOUND", `no protocol '${query.protocol}' is configured`);
      }
      const bounds = await timeBounds(query);
      const filter = { address, protocol, ...bounds };
      if (bounds) checkRowCount(await countAddressTransactionsExport(db, filter, maxRows + 1));
      async function* pages() {
        if (!bounds) return;
        let after: TransactionPosition | undefined;
        for (;;) {
          const txs = await getAddressTransactionsExport(db, filter, { after, limit: EXPORT_PAGE_ROWS });
          const last = txs.at(-1);
          if (!last) return;
          const transfers = await getTransfersOfTransactions(db, txs);
          const byTx = new Map<string, ExportTransfer[]>();
          for (const t of transfers) byTx.set(t.txHash, [...(byTx.get(t.txHash) ?? []), t]);
          const values = await deps.valueTransactions(
            txs.map((tx) => ({
              tx,
              transfers: (byTx.get(tx.hash) ?? []).filter((t) => tokens.has(t.tokenAddress)),
            })),
          );
          yield txs.map((tx): CsvValue[] => [
            tx.hash,
            tx.blockNumber,
            tx.blockTimestamp.toISOString(),
            checksum(tx.fromAddress),
            tx.toAddress ? checksum(tx.toAddress) : null,
            tx.protocol,
            tx.actionType,
            tx.functionName,
            tx.status,
            tx.valueWei,
            tx.gasUsed,
            tx.gasPrice,
            tx.gasUsed * tx.gasPrice,
            values.get(tx.hash)?.valueUsd ?? null,
          ]);
          if (txs.length < EXPORT_PAGE_ROWS) return;
          after = { blockNumber: last.blockNumber, transactionIndex: last.transactionIndex };
        }
      }
      return sendCsv(reply, `transactions-${checksum(address)}.csv`, TRANSACTION_COLUMNS, pages());
    },
  );

  app.get(
    "/api/address/:address/transfers.csv",
    {
      schema: {
        operationId: "exportAddressTransfers",
        summary: "CSV of the tracked-token transfers from or to an address, oldest first",
        tags: ["exports"],
        params: AddressParams,
        querystring: Type.Object(
          {
            token: Type.Optional(
              Type.String({
                pattern: "^0x[0-9a-fA-F]{40}$",
                description: "only this tracked token (any case)",
              }),
            ),
            from: Type.Optional(Time("first block time")),
            to: Type.Optional(Time("last block time")),
          },
          { additionalProperties: false },
        ),
        response: {
          200: csvResponse(`columns ${ADDRESS_TRANSFER_COLUMNS.join(",")}`),
          400: ProblemSchema,
          404: ProblemSchema,
        },
      },
    },
    async (request, reply) => {
      const address = request.params.address.toLowerCase();
      const query = request.query;
      const only = query.token === undefined ? undefined : trackedToken(query.token);
      const bounds = await timeBounds(query);
      const filter: TransfersExport = {
        tokens: only ? [only.address] : [...tokens.keys()],
        party: address,
        ...bounds,
      };
      if (bounds) checkRowCount(await countTransfersExport(db, filter, maxRows + 1));
      async function* pages() {
        if (!bounds) return;
        for await (const { rows, prices } of transferPages(filter)) {
          yield rows.map((row, i): CsvValue[] => {
            const token = tokens.get(row.tokenAddress);
            const decimals = token?.decimals ?? 0;
            const direction =
              row.fromAddress === address && row.toAddress === address
                ? "self"
                : row.fromAddress === address
                  ? "out"
                  : "in";
            return [
              row.txHash,
              row.logIndex,
              row.blockNumber,
              row.blockTimestamp.toISOString(),
              checksum(row.tokenAddress),
              token?.symbol ?? "",
              checksum(row.fromAddress),
              checksum(row.toAddress),
              direction,
              row.amount,
              decimals,
              formatUnits(row.amount, decimals),
              prices[i] ?? null,
              usdOf(row, prices[i]),
            ];
          });
        }
      }
      return sendCsv(reply, `token-transfers-${checksum(address)}.csv`, ADDRESS_TRANSFER_COLUMNS, pages());
    },
  );

  app.get(
    "/api/tokens/:address/events.csv",
    {
      schema: {
        operationId: "exportTokenEvents",
        summary: "CSV of a tracked token's stored Transfer events, oldest first",
        tags: ["exports"],
        params: AddressParams,
        querystring: Type.Object(
          {
            address: Type.Optional(
              Type.String({
                pattern: "^0x[0-9a-fA-F]{40}$",
                description: "only transfers where this address (any case) is the sender or the receiver",
              }),
            ),
            fromBlock: Type.Optional(BlockNumberParam),
            toBlock: Type.Optional(BlockNumberParam),
          },
          { additionalProperties: false },
        ),
        response: {
          200: csvResponse(`columns ${TOKEN_EVENT_COLUMNS.join(",")}`),
          400: ProblemSchema,
          404: ProblemSchema,
        },
      },
    },
    async (request, reply) => {
      const token = trackedToken(request.params.address);
      const query = request.query;
      if (query.fromBlock !== undefined && query.toBlock !== undefined && query.fromBlock > query.toBlock) {
        throw new ApiError("INVALID_PARAMETER", "fromBlock: must not be greater than toBlock");
      }
      const filter: TransfersExport = {
        tokens: [token.address],
        party: query.address?.toLowerCase(),
        fromBlock: query.fromBlock,
        toBlock: query.toBlock,
      };
      checkRowCount(await countTransfersExport(db, filter, maxRows + 1));
      async function* pages() {
        for await (const { rows, prices } of transferPages(filter)) {
          yield rows.map((row, i): CsvValue[] => [
            row.txHash,
            row.logIndex,
            row.blockNumber,
            row.blockTimestamp.toISOString(),
            checksum(row.fromAddress),
            checksum(row.toAddress),
            row.amount,
            token.decimals,
            formatUnits(row.amount, token.decimals),
            prices[i] ?? null,
            usdOf(row, prices[i]),
          ]);
        }
      }
      return sendCsv(reply, `transfers-${checksum(token.address)}.csv`, TOKEN_EVENT_COLUMNS, pages());
    },
  );

  app.get(
    "/api/tokens/:address/holders.csv",
    {
      schema: {
        operationId: "exportTokenHolders",
        summary: "CSV of a tracked token's holders by rank (balance, largest first), zero balances excluded",
        tags: ["exports"],
        params: AddressParams,
        response: {
          200: csvResponse(`columns ${HOLDER_COLUMNS.join(",")}`),
          400: ProblemSchema,
          404: ProblemSchema,
          503: ProblemSchema,
        },
      },
    },
    async (request, reply) => {
      const token = trackedToken(request.params.address);
      checkRowCount(await countHoldersExport(db, token.address, maxRows + 1));
      const totalSupply = await supply.get(token.address as Address);
      const supplyNumber = Number(totalSupply);
      async function* pages() {
        let after: HolderPosition | undefined;
        let rank = 0;
        for (;;) {
          const rows = await getHoldersExport(db, token.address, { after, limit: EXPORT_PAGE_ROWS });
          const last = rows.at(-1);
          if (!last) return;
          yield rows.map((row): CsvValue[] => [
            ++rank,
            checksum(row.holder),
            row.balance,
            formatUnits(row.balance, token.decimals),
            totalSupply === 0n ? 0 : Number(row.balance) / supplyNumber,
          ]);
          if (rows.length < EXPORT_PAGE_ROWS) return;
          after = last;
        }
      }
      return sendCsv(reply, `holders-${checksum(token.address)}.csv`, HOLDER_COLUMNS, pages());
    },
  );
}
