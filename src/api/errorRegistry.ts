/**
 * Every error code the API answers with (SPEC §4), its HTTP status and title. One registry, one handler
 * (`problemHandler.ts`); docs/errors.md documents each code under an anchor equal to the code, which is where
 * a problem's `type` (`/docs/errors#CODE`) points, and `errorRegistry.test.ts` keeps the two in step.
 */
export const ERROR_REGISTRY = {
  INVALID_ADDRESS: { status: 400, title: "Invalid address" },
  INVALID_TX_HASH: { status: 400, title: "Invalid transaction hash" },
  INVALID_PARAMETER: { status: 400, title: "Invalid parameter" },
  INVALID_BODY: { status: 400, title: "Invalid request body" },
  BAD_REQUEST: { status: 400, title: "Malformed request" },
  INVALID_SIGNATURE: { status: 401, title: "Invalid signature" },
  UNAUTHORIZED: { status: 401, title: "Missing or invalid API key" },
  NOT_FOUND: { status: 404, title: "Not found" },
  TOKEN_NOT_TRACKED: { status: 404, title: "Token not tracked" },
  PROTOCOL_NOT_FOUND: { status: 404, title: "Protocol not found" },
  TX_NOT_FOUND: { status: 404, title: "Transaction not found" },
  METHOD_NOT_ALLOWED: { status: 405, title: "Method not allowed" },
  REQUEST_TIMEOUT: { status: 408, title: "Request timeout" },
  PAYLOAD_TOO_LARGE: { status: 413, title: "Payload too large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: "Unsupported media type" },
  NOT_RELEVANT: { status: 422, title: "Transaction not relevant" },
  RATE_LIMITED: { status: 429, title: "Too many requests" },
  HEADERS_TOO_LARGE: { status: 431, title: "Request header fields too large" },
  INTERNAL: { status: 500, title: "Internal error" },
  UPSTREAM_UNAVAILABLE: { status: 503, title: "Upstream unavailable" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_REGISTRY;

/** Every code, in registry order. */
export const ERROR_CODES = Object.keys(ERROR_REGISTRY) as ErrorCode[];

/** Whether `value` is one of the registry's codes (e.g. when checking a problem body). */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_REGISTRY, value);
}

/** Thrown by route handlers; the error handler turns it into problem+json. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, detail: string, headers: Record<string, string> = {}) {
    super(detail);
    this.code = code;
    this.detail = detail;
    this.headers = headers;
  }
}

/** RFC 9457 problem details as protoscan sends them. */
export type Problem = { type: string; title: string; status: number; detail: string; code: ErrorCode };

/** The `type` URI reference of a code: its anchor in docs/errors.md. */
export function problemType(code: ErrorCode): string {
  return `/docs/errors#${code}`;
}

/** The problem details body for `code` (RFC 9457: `type`, `title`, `status`, `detail`, plus our `code`). */
export function problem(code: ErrorCode, detail: string): Problem {
  const { status, title } = ERROR_REGISTRY[code];
  return { type: problemType(code), title, status, detail, code };
}
