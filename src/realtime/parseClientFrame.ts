import { parseTopic, type TopicCatalog } from "./parseTopic.ts";
import type { WsErrorCode } from "./wsErrorCodes.ts";

/** The largest client frame read as a message (SPEC §5: 16 KiB); larger ones get `FRAME_TOO_LARGE`. */
export const MAX_CLIENT_FRAME_BYTES = 16 * 1024;

/** A client message, validated; `topic` is canonical. `id` is whatever JSON the client sent, or null. */
export type ClientRequest =
  | { op: "subscribe" | "unsubscribe"; topic: string; id: unknown }
  | { op: "ping"; id: unknown; hasId: boolean }
  | { op: "error"; code: WsErrorCode; message: string; id: unknown };

/**
 * Parse one client frame (SPEC §5): `{"op":"subscribe"|"unsubscribe","topic":T,"id":any}` or
 * `{"op":"ping"}`. Every way a frame can be wrong maps to one error code, echoing the request `id` when one
 * could be read; the caller answers it and keeps the connection open. Unknown extra keys are ignored.
 */
export function parseClientFrame(
  frame: { text: string; bytes: number } | { binary: true; bytes: number },
  catalog: TopicCatalog,
): ClientRequest {
  if (frame.bytes > MAX_CLIENT_FRAME_BYTES) {
    return error("FRAME_TOO_LARGE", `frame of ${frame.bytes} bytes exceeds ${MAX_CLIENT_FRAME_BYTES}`, null);
  }
  if ("binary" in frame)
    return error("INVALID_MESSAGE", "binary frames are not accepted: send JSON text", null);

  let parsed: unknown;
  try {
    parsed = JSON.parse(frame.text);
  } catch {
    return error("INVALID_JSON", "the frame is not valid JSON", null);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return error(
      "INVALID_MESSAGE",
      'expected a JSON object such as {"op":"subscribe","topic":"transactions"}',
      null,
    );
  }
  const message = parsed as Record<string, unknown>;
  const hasId = Object.hasOwn(message, "id");
  const id = hasId ? message.id : null;
  const op = message.op;
  if (typeof op !== "string") return error("INVALID_MESSAGE", "`op` must be a string", id);

  switch (op) {
    case "ping":
      return { op, id, hasId };
    case "subscribe":
    case "unsubscribe": {
      const topic = parseTopic(message.topic, catalog);
      return topic.ok ? { op, topic: topic.topic, id } : error(topic.code, topic.message, id);
    }
    default:
      return error(
        "UNKNOWN_OP",
        `unknown op ${JSON.stringify(op.slice(0, 32))}: expected subscribe, unsubscribe or ping`,
        id,
      );
  }
}

function error(code: WsErrorCode, message: string, id: unknown): ClientRequest {
  return { op: "error", code, message, id };
}
