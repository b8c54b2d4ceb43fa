import type { TokenConfig } from "../config/schema.ts";
import type { TransferRow } from "../store/tokenReads.ts";
import type { TokenJson, TransferEventJson } from "./schemas/tokenResponses.ts";
import { checksum } from "./toTransactionJson.ts";

/**
 * Config -> API JSON for the Token resource (SPEC §4 row 1: the seed's fields exactly, address EIP-55), the
 * one place that shape is built.
 */
export function toTokenJson(token: TokenConfig): TokenJson {
  return {
    symbol: token.symbol,
    name: token.name,
    address: checksum(token.address),
    decimals: token.decimals,
    protocol: token.protocol,
    color: token.color,
    logo: token.logo,
    official: token.official,
  };
}

/** Row -> API JSON for a TransferEvent of `GET /api/tokens/:address/events` (SPEC §4 row 4). */
export function toTransferEventJson(row: TransferRow, token: TokenConfig): TransferEventJson {
  return {
    txHash: row.txHash,
    logIndex: row.logIndex,
    blockNumber: row.blockNumber,
    blockTimestamp: row.blockTimestamp.toISOString(),
    tokenAddress: checksum(row.tokenAddress),
    tokenSymbol: token.symbol,
    fromAddress: checksum(row.fromAddress),
    toAddress: checksum(row.toAddress),
    amount: row.amount.toString(),
    decimals: token.decimals,
  };
}
