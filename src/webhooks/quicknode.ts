import { hmacMatches } from "./hmacMatches.ts";
import { headerValue, isJsonObject, type ParsedDelivery, type WebhookProvider } from "./provider.ts";
import { collectTxHashes } from "./walkJson.ts";

export const QN_SIGNATURE_HEADER = "x-qn-signature";
export const QN_NONCE_HEADER = "x-qn-nonce";
export const QN_TIMESTAMP_HEADER = "x-qn-timestamp";
/** How far `x-qn-timestamp` may be from our clock, either way (SPEC §3.2). */
export const QN_MAX_SKEW_SECONDS = 300;

/**
 * QuickNode Streams (SPEC §3.2). `x-qn-signature` is the hex HMAC-SHA256 of `nonce + timestamp + body`
 * (UTF-8 strings concatenated, the body uncompressed when the stream gzips it) keyed with the stream's
 * security token; `x-qn-timestamp` is in Unix seconds and must be within 300 s of now; `x-qn-nonce`
 * identifies the delivery. The body is `{data, metadata}` (metadata in the body) or the bare dataset; the
 * `logs`, `receipts` and `block_with_receipts` datasets and filter outputs all carry `transactionHash`.
 * @see https://www.quicknode.com/guides/quicknode-products/streams/validating-incoming-streams-webhook-messages
 * @see https://www.quicknode.com/docs/streams/data-sources
 */
export const quicknode: WebhookProvider = {
  name: "quicknode",
  secrets: (config) => config.webhooks.quicknode?.securityTokens ?? null,
  verify: ({ headers, rawBody, secrets, nowMs }) => verifyQuickNode(headers, rawBody, secrets, nowMs),
  // verify() has checked that the nonce is there
  deliveryId: ({ headers }) => headerValue(headers, QN_NONCE_HEADER) ?? "",
  parse: (payload) => parseQuickNodePayload(payload),
};

function verifyQuickNode(
  headers: Parameters<WebhookProvider["verify"]>[0]["headers"],
  rawBody: string,
  secrets: readonly string[],
  nowMs: number,
): ReturnType<WebhookProvider["verify"]> {
  const nonce = headerValue(headers, QN_NONCE_HEADER);
  const timestamp = headerValue(headers, QN_TIMESTAMP_HEADER);
  const signature = headerValue(headers, QN_SIGNATURE_HEADER);
  if (nonce === undefined || timestamp === undefined || signature === undefined) {
    return {
      ok: false,
      reason: `missing ${[QN_SIGNATURE_HEADER, QN_NONCE_HEADER, QN_TIMESTAMP_HEADER].join(", ")} header`,
    };
  }
  if (nonce.length > 200) return { ok: false, reason: `${QN_NONCE_HEADER} is too long` };
  // The signature is checked before the clock so that an unsigned request learns nothing about the window.
  if (!hmacMatches(nonce + timestamp + rawBody, signature, secrets)) {
    return { ok: false, reason: `invalid ${QN_SIGNATURE_HEADER}` };
  }
  const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  if (!Number.isFinite(seconds) || Math.abs(nowMs / 1000 - seconds) > QN_MAX_SKEW_SECONDS) {
    return { ok: false, reason: `${QN_TIMESTAMP_HEADER} is not within ${QN_MAX_SKEW_SECONDS} s of now` };
  }
  return { ok: true };
}

/** Every `transactionHash` anywhere in the payload's `data` (or in the bare dataset). */
export function parseQuickNodePayload(payload: unknown): ParsedDelivery {
  const data = isJsonObject(payload) && "data" in payload ? payload.data : payload;
  return { hashes: collectTxHashes(data, (key, value) => (key === "transactionHash" ? value : undefined)) };
}
