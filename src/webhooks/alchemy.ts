import { createHash } from "node:crypto";
import type { Hash } from "viem";
import { hmacMatches } from "./hmacMatches.ts";
import { headerValue, isJsonObject, type ParsedDelivery, type WebhookProvider } from "./provider.ts";
import { collectTxHashes, isTxHash } from "./walkJson.ts";

export const ALCHEMY_SIGNATURE_HEADER = "x-alchemy-signature";

/**
 * Alchemy Notify (SPEC §3.2). `X-Alchemy-Signature` is the hex HMAC-SHA256 of the raw request body keyed with
 * the webhook's signing key (no prefix, no timestamp). Every payload is an envelope
 * `{webhookId, id, createdAt, type, event}` whose `id` identifies the delivery.
 * - `ADDRESS_ACTIVITY`: `event.activity[]`, one item per transfer, each with the transaction `hash`;
 * - `GRAPHQL` (custom webhooks): `event.data` is the query's result, e.g. `block.logs[].transaction.hash`;
 *   every `transaction { hash }` (and `transactions [{ hash }]`) in it is taken;
 * - a payload with `event.error` reports a failure on Alchemy's side: it is logged and carries nothing.
 * @see https://www.alchemy.com/docs/reference/notify-api-quickstart
 * @see https://www.alchemy.com/docs/reference/address-activity-webhook
 * @see https://www.alchemy.com/docs/reference/custom-webhook
 */
export const alchemy: WebhookProvider = {
  name: "alchemy",
  secrets: (config) => config.webhooks.alchemy?.signingKeys ?? null,
  verify: ({ headers, rawBody, secrets }) =>
    hmacMatches(rawBody, headerValue(headers, ALCHEMY_SIGNATURE_HEADER), secrets)
      ? { ok: true }
      : { ok: false, reason: `missing or invalid ${ALCHEMY_SIGNATURE_HEADER}` },
  deliveryId: ({ payload, rawBody }) => alchemyDeliveryId(payload, rawBody),
  parse: (payload) => parseAlchemyPayload(payload),
};

/**
 * The envelope's `id` (`whevt_…`); a payload without a usable one (missing, over 200 characters, or holding a
 * U+0000 the database cannot store) is identified by the SHA-256 of its body.
 */
export function alchemyDeliveryId(payload: unknown, rawBody: string): string {
  const id = isJsonObject(payload) ? payload.id : undefined;
  if (typeof id === "string" && id.length > 0 && id.length <= 200 && !id.includes("\0")) return id;
  return `sha256:${createHash("sha256").update(rawBody, "utf8").digest("hex")}`;
}

/** The transaction hashes of an Alchemy Notify payload (ADDRESS_ACTIVITY or GRAPHQL). */
export function parseAlchemyPayload(payload: unknown): ParsedDelivery {
  const event = isJsonObject(payload) && isJsonObject(payload.event) ? payload.event : undefined;
  if (!event) return { hashes: [] };
  if (event.error !== undefined && event.error !== null) {
    return { hashes: [], error: describeError(event.error) };
  }
  if (Array.isArray(event.activity)) {
    const hashes = new Set<Hash>();
    for (const item of event.activity) {
      if (isJsonObject(item) && isTxHash(item.hash)) hashes.add(item.hash.toLowerCase() as Hash);
    }
    return { hashes: [...hashes] };
  }
  if (isJsonObject(event.data)) {
    return {
      hashes: collectTxHashes(event.data, (key, value) => {
        if (key === "transaction" && isJsonObject(value)) return value.hash;
        if (key === "transactions" && Array.isArray(value)) {
          return value.map((item) => (isJsonObject(item) ? item.hash : undefined));
        }
        return undefined;
      }),
    };
  }
  return { hashes: [] };
}

function describeError(error: unknown): string {
  const text = typeof error === "string" ? error : JSON.stringify(error);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
