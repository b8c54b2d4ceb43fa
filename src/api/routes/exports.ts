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
import { type KeysetPage, keysetPages, registerCsvExport } from "../exportCsv.ts";
import { parseTime } from "../historyRange.ts";
import { BlockNumberParam } from "../schemas/common.ts";
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

const Time = (description: string) =>
  Type.String({ maxLength: 64, description: `${description}: ISO 8601 or unix seconds, inclusive` });

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
    const read = keysetPages(
      (page: KeysetPage<TransferPosition>) => getTransfersExport(db, query, page),
      (last) => ({ blockNumber: last.blockNumber, logIndex: last.logIndex }),
    );
    for await (const rows of read) yield { rows, prices: await pricesOf(rows) };
  }

  registerCsvExport(app, {
    url: "/api/address/:address/transactions.csv",
    operationId: "exportAddressTransactions",
    summary: "CSV of the transactions an address takes part in, oldest first",
    columns: TRANSACTION_COLUMNS,
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
    open: async (param, query) => {
      const address = param.toLowerCase();
      const protocol = query.protocol?.toLowerCase();
      if (protocol !== undefined && !protocols.has(protocol)) {
        throw new ApiError("PROTOCOL_NOT_FOUND", `no protocol '${query.protocol}' is configured`);
      }
      const bounds = await timeBounds(query);
      const filter = { address, protocol, ...bounds };
      if (bounds) checkRowCount(await countAddressTransactionsExport(db, filter, maxRows + 1));
      async function* pages() {
        if (!bounds) return;
        const read = keysetPages(
          (page: KeysetPage<TransactionPosition>) => getAddressTransactionsExport(db, filter, page),
          (last) => ({ blockNumber: last.blockNumber, transactionIndex: last.transactionIndex }),
        );
        for await (const txs of read) {
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
        }
      }
      return { filename: `transactions-${checksum(address)}.csv`, pages: pages() };
    },
  });

  registerCsvExport(app, {
    url: "/api/address/:address/transfers.csv",
    operationId: "exportAddressTransfers",
    summary: "CSV of the tracked-token transfers from or to an address, oldest first",
    columns: ADDRESS_TRANSFER_COLUMNS,
    querystring: Type.Object(
      {
        token: Type.Optional(
          Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "only this tracked token (any case)" }),
        ),
        from: Type.Optional(Time("first block time")),
        to: Type.Optional(Time("last block time")),
      },
      { additionalProperties: false },
    ),
    open: async (param, query) => {
      const address = param.toLowerCase();
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
      return { filename: `token-transfers-${checksum(address)}.csv`, pages: pages() };
    },
  });

  registerCsvExport(app, {
    url: "/api/tokens/:address/events.csv",
    operationId: "exportTokenEvents",
    summary: "CSV of a tracked token's stored Transfer events, oldest first",
    columns: TOKEN_EVENT_COLUMNS,
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
    open: async (param, query) => {
      const token = trackedToken(param);
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
      return { filename: `transfers-${checksum(token.address)}.csv`, pages: pages() };
    },
  });

  registerCsvExport(app, {
    url: "/api/tokens/:address/holders.csv",
    operationId: "exportTokenHolders",
    summary: "CSV of a tracked token's holders by rank (balance, largest first), zero balances excluded",
    columns: HOLDER_COLUMNS,
    // No parameters; any given are ignored.
    querystring: Type.Object({}),
    readsChain: true,
    open: async (param) => {
      const token = trackedToken(param);
      checkRowCount(await countHoldersExport(db, token.address, maxRows + 1));
      const totalSupply = await supply.get(token.address as Address);
      const supplyNumber = Number(totalSupply);
      async function* pages() {
        let rank = 0;
        const read = keysetPages(
          (page: KeysetPage<HolderPosition>) => getHoldersExport(db, token.address, page),
          (last) => last,
        );
        for await (const rows of read) {
          yield rows.map((row): CsvValue[] => [
            ++rank,
            checksum(row.holder),
            row.balance,
            formatUnits(row.balance, token.decimals),
            totalSupply === 0n ? 0 : Number(row.balance) / supplyNumber,
          ]);
        }
      }
      return { filename: `holders-${checksum(token.address)}.csv`, pages: pages() };
    },
  });
}
