import type { IngestEvent } from "../ingest/broadcaster.ts";
import { NO_VALUE, type TransactionValue } from "../prices/transactionValues.ts";
import { encodeLogs, encodeTransaction, encodeTransfers } from "../store/encode.ts";
import type { logs, tokenTransfers, transactions } from "../store/schema.ts";
import type { WsErrorCode } from "./wsErrorCodes.ts";

/**
 * Server -> client messages (SPEC §5), as the JSON text sent on the wire. Replies to a client op echo its
 * `id` (null when it sent none); `pong` carries `id` only when the ping had one, so a bare ping gets the
 * bare `{"type":"pong"}` of the contract.
 */
export const serverMessages = {
  subscribed: (topic: string, id: unknown) => JSON.stringify({ type: "subscribed", topic, id: id ?? null }),
  unsubscribed: (topic: string, id: unknown) =>
    JSON.stringify({ type: "unsubscribed", topic, id: id ?? null }),
  error: (code: WsErrorCode, message: string, id: unknown) =>
    JSON.stringify({ type: "error", code, message, id: id ?? null }),
  pong: (id: unknown, hasId: boolean) => JSON.stringify(hasId ? { type: "pong", id } : { type: "pong" }),
};

/**
 * How a transaction's rows (as stored, or as about to be stored) become the Transaction JSON of
 * `GET /api/tx/:hash`: `transactionJsonOf` in api/toTransactionJson.ts, handed to the hub and the fan-out by
 * whoever wires them, so the WebSocket messages and the HTTP API share one serializer while realtime/ does
 * not import the API.
 */
export type TransactionJsonOf = (
  tx: typeof transactions.$inferInsert & { source: string },
  logRows: readonly (typeof logs.$inferInsert)[],
  transferRows: readonly (typeof tokenTransfers.$inferInsert)[],
  /** its USD values at block time (SPEC §10.2); `NO_VALUE` when not valued */
  value?: TransactionValue,
) => unknown;

/**
 * The `data` of an event's messages, serialized once per event however many topics and subscribers it
 * reaches: for a transaction the Transaction JSON of `GET /api/tx/:hash` (built by `transactionJson` from
 * the rows the store keeps, with `value`, its USD values at block time), for a removal
 * `{txHash, blockNumber, blockHash}`.
 */
export function serializeEventData(
  event: IngestEvent,
  transactionJson: TransactionJsonOf,
  value: TransactionValue = NO_VALUE,
): string {
  if (event.type === "removed") {
    const { hash, blockNumber, blockHash } = event.removed;
    return JSON.stringify({ txHash: hash.toLowerCase(), blockNumber, blockHash: blockHash.toLowerCase() });
  }
  const tx = event.transaction;
  return JSON.stringify(
    transactionJson(encodeTransaction(tx, event.source), encodeLogs(tx), encodeTransfers(tx), value),
  );
}

/**
 * One topic's message for an event: `{"type":"transaction"|"removed","topic":T,"data":…}`, spliced from the
 * already serialized `data` so that fan-out costs one string concatenation per topic.
 */
export function eventMessage(type: IngestEvent["type"], topic: string, data: string): string {
  return `{"type":${JSON.stringify(type)},"topic":${JSON.stringify(topic)},"data":${data}}`;
}
