import type { Hash } from "viem";
import type { Config } from "../config/schema.ts";

/** Request headers as Node gives them: lowercase names, a repeated header as an array. */
export type WebhookHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The outcome of checking a delivery's signature (and, for QuickNode, its timestamp). */
export type Verification = { ok: true } | { ok: false; reason: string };

/** What a delivery asks protoscan to ingest. */
export type ParsedDelivery = {
  /** transaction hashes, lowercase, each once, in document order */
  hashes: Hash[];
  /** the provider's error variant (Alchemy `event.error`): logged, nothing to ingest */
  error?: string;
};

/**
 * One webhook provider (SPEC §3.2): how its deliveries are authenticated, identified and read. Each provider
 * lives in its own file (`alchemy.ts`, `quicknode.ts`); `webhookProviders.ts` lists them.
 */
export type WebhookProvider = {
  /** the `:provider` path segment */
  name: string;
  /** The configured secrets (signing keys, security tokens), or null when its config section is absent. */
  secrets(config: Config): readonly string[] | null;
  /** Check the signature over the raw body against every secret, before anything else is read. */
  verify(args: {
    headers: WebhookHeaders;
    rawBody: string;
    secrets: readonly string[];
    nowMs: number;
  }): Verification;
  /** The provider's id of this delivery, the key that makes a retried or replayed delivery count once. */
  deliveryId(args: { headers: WebhookHeaders; payload: unknown; rawBody: string }): string;
  /** The transaction hashes of a (verified, parsed) payload. Never throws: unknown shapes yield none. */
  parse(payload: unknown): ParsedDelivery;
};

/** The single value of a header; absent, empty or repeated (ambiguous) is undefined. */
export function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** A plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
