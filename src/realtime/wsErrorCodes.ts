/**
 * The codes of WebSocket `error` messages (SPEC §5), each with the situation it names. docs/websocket.md
 * documents every one (`wsErrorCodes.test.ts` keeps the two in step). The connection stays open after each.
 */
export const WS_ERROR_CODES = {
  INVALID_JSON: "the frame is not valid JSON",
  INVALID_MESSAGE: "the frame is JSON but not a message object (or a binary frame)",
  UNKNOWN_OP: "`op` is not subscribe, unsubscribe or ping",
  INVALID_TOPIC: "the topic is missing or malformed",
  UNKNOWN_TOPIC: "the topic names a protocol that is not configured or a token that is not tracked",
  TOO_MANY_TOPICS: "the connection already has the maximum number of topics",
  FRAME_TOO_LARGE: "the frame is larger than 16 KiB",
} as const;

export type WsErrorCode = keyof typeof WS_ERROR_CODES;
