import type { Config } from "../config/schema.ts";
import type { WsErrorCode } from "./wsErrorCodes.ts";

/** What a topic may name: the configured protocol ids and the tracked token addresses (lowercase). */
export type TopicCatalog = {
  protocols: ReadonlySet<string>;
  tokens: ReadonlySet<string>;
};

export type ParsedTopic = { ok: true; topic: string } | { ok: false; code: WsErrorCode; message: string };

/** Longer than any valid topic (`protocol:` + a 64-character id); longer strings are not even echoed. */
const MAX_TOPIC_LENGTH = 80;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The protocols and tracked tokens of a config, as `parseTopic` needs them. */
export function topicCatalog(config: Pick<Config, "protocols" | "tokens">): TopicCatalog {
  return {
    protocols: new Set(config.protocols.map((p) => p.id)),
    tokens: new Set(config.tokens.map((t) => t.address.toLowerCase())),
  };
}

/**
 * Validate a client's topic (SPEC §5) and return its canonical form, the one every server message for it
 * carries: `transactions`, `protocol:<id>` (a configured protocol, exact id), `address:<0x…>` (any valid
 * 20-byte hex, any case in, lowercase out) and `token:<0x…>` (a tracked token, lowercase out).
 * Malformed input is `INVALID_TOPIC`; a well-formed topic naming nothing configured is `UNKNOWN_TOPIC`.
 */
export function parseTopic(raw: unknown, catalog: TopicCatalog): ParsedTopic {
  if (typeof raw !== "string" || raw.length === 0) {
    return invalid("`topic` must be a non-empty string");
  }
  if (raw.length > MAX_TOPIC_LENGTH) return invalid(`topic is longer than ${MAX_TOPIC_LENGTH} characters`);
  if (raw === "transactions") return { ok: true, topic: raw };

  const colon = raw.indexOf(":");
  const kind = colon === -1 ? raw : raw.slice(0, colon);
  const value = colon === -1 ? "" : raw.slice(colon + 1);
  switch (kind) {
    case "protocol":
      if (value === "") return invalid("expected protocol:<id>");
      if (!catalog.protocols.has(value)) {
        return { ok: false, code: "UNKNOWN_TOPIC", message: `protocol ${value} is not configured` };
      }
      return { ok: true, topic: `protocol:${value}` };
    case "address":
      if (!ADDRESS.test(value)) return invalid("expected address:<0x followed by 40 hex digits>");
      return { ok: true, topic: `address:${value.toLowerCase()}` };
    case "token": {
      if (!ADDRESS.test(value)) return invalid("expected token:<0x followed by 40 hex digits>");
      const token = value.toLowerCase();
      if (!catalog.tokens.has(token)) {
        return { ok: false, code: "UNKNOWN_TOPIC", message: `token ${token} is not tracked` };
      }
      return { ok: true, topic: `token:${token}` };
    }
    default:
      return invalid(
        `unknown topic ${raw}: expected transactions, protocol:<id>, address:<0x…> or token:<0x…>`,
      );
  }
}

function invalid(message: string): ParsedTopic {
  return { ok: false, code: "INVALID_TOPIC", message };
}
