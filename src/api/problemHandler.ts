import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errorMessage, RetryableError } from "../internal/errors.ts";
import { driverErrorOf, isTransientDatabaseError } from "../store/errors.ts";
import { ApiError, ERROR_REGISTRY, type ErrorCode, problem } from "./errorRegistry.ts";
import { createRouteIndex } from "./plugins/routeIndex.ts";

/**
 * Fastify's own error codes that have one of ours, with a detail describing the request (Fastify's message
 * describes Fastify).
 */
const FASTIFY_CODES: Record<string, { code: ErrorCode; detail: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: "PAYLOAD_TOO_LARGE", detail: "request body is larger than 1 MiB" },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: "UNSUPPORTED_MEDIA_TYPE",
    detail: "request body must be application/json",
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: "INVALID_BODY",
    detail: "body: its length does not match Content-Length",
  },
  FST_ERR_CTP_INVALID_JSON_BODY: {
    code: "INVALID_BODY",
    detail: "body: is not valid JSON (or has a __proto__ key)",
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    code: "INVALID_BODY",
    detail: "body: is empty although Content-Type is application/json",
  },
  FST_ERR_BAD_URL: { code: "BAD_REQUEST", detail: "path: not a valid URL (malformed percent-encoding)" },
  FST_ERR_MAX_PARAM_LENGTH: {
    code: "INVALID_PARAMETER",
    detail: "path: a path parameter is longer than 100 characters",
  },
};

/** Route parameters whose validation failure has a code of its own. */
const PARAM_CODES: Record<string, ErrorCode> = {
  address: "INVALID_ADDRESS",
  hash: "INVALID_TX_HASH",
  txHash: "INVALID_TX_HASH",
};

/** Status -> code for 4xx errors raised by plugins without a code we know. */
const STATUS_CODE_FALLBACK: Record<number, ErrorCode> = {
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  408: "REQUEST_TIMEOUT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  429: "RATE_LIMITED",
  431: "HEADERS_TOO_LARGE",
};

type Classified = { code: ErrorCode; detail: string; headers: Record<string, string> };

/**
 * One error handler for the whole API (SPEC §4): every 4xx and 5xx leaves as RFC 9457
 * `application/problem+json` with a stable `code` from the registry, unknown paths as 404 `NOT_FOUND` and
 * known paths with a wrong method as 405 `METHOD_NOT_ALLOWED` with `Allow`. Messages never carry stack
 * traces, SQL or URLs; unexpected errors are logged with their details and answered with a bare `INTERNAL`.
 * Call it before registering routes: it indexes them as they come.
 */
export function registerProblemHandler(app: FastifyInstance): void {
  const routes = createRouteIndex(app);

  app.setErrorHandler((error: unknown, request, reply) => sendProblem(reply, classifyError(error, request)));

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "/";
    const allowed = routes.allowedMethods(path);
    const method = request.method === "HEAD" ? "GET" : request.method;
    const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
    if (allowed.length > 0 && !allowed.includes(method)) {
      return sendProblem(reply, {
        code: "METHOD_NOT_ALLOWED",
        detail: `${request.method} is not allowed on ${shown}; use ${allowed.join(", ")}`,
        headers: { allow: allowed.join(", ") },
      });
    }
    return sendProblem(reply, {
      code: "NOT_FOUND",
      detail: `no route ${request.method} ${shown}`,
      headers: {},
    });
  });
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a malformed URL, an over-long path
 * parameter) would otherwise be answered with Fastify's own JSON body.
 */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  sendProblem(reply, classifyError(error, request));
}

/**
 * Fastify's `clientErrorHandler` option: requests Node cannot parse as HTTP (bad request line, headers over
 * the size limit, timeouts) are answered on the raw socket, still as problem+json.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  let code: ErrorCode = "BAD_REQUEST";
  let detail = "the request is not valid HTTP";
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    code = "REQUEST_TIMEOUT";
    detail = "the request was not received in time";
  } else if (error.code === "HPE_HEADER_OVERFLOW") {
    code = "HEADERS_TOO_LARGE";
    detail = "request headers are larger than the server accepts";
  }
  const body = JSON.stringify(problem(code, detail));
  const { status } = ERROR_REGISTRY[code];
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n` +
        `Content-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

function sendProblem(reply: FastifyReply, { code, detail, headers }: Classified): FastifyReply {
  const body = problem(code, detail);
  return reply.code(body.status).headers(headers).type("application/problem+json").send(body);
}

/** Map anything thrown while handling a request to a registry code and a detail safe to show. */
function classifyError(error: unknown, request: FastifyRequest): Classified {
  if (error instanceof ApiError) return { code: error.code, detail: error.detail, headers: error.headers };
  const fe = (error ?? {}) as Partial<FastifyError>;
  if (fe.validation) return classifyValidation(fe);
  const known = own(FASTIFY_CODES, fe.code);
  if (known) return { ...known, headers: {} };
  if (error instanceof RetryableError || isTransientDatabaseError(error)) {
    request.log.warn({ err: errorMessage(driverErrorOf(error)) }, "upstream unavailable");
    return {
      code: "UPSTREAM_UNAVAILABLE",
      detail: "a database or node provider is unavailable; try again shortly",
      headers: {},
    };
  }
  const status = fe.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    // A JSON body rejected by the parser (e.g. a `__proto__` key) or another plugin's client error.
    if (error instanceof SyntaxError || fe.code?.startsWith("FST_ERR_CTP_")) {
      return { code: "INVALID_BODY", detail: `body: ${fe.message ?? "is not valid JSON"}`, headers: {} };
    }
    return {
      code: own(STATUS_CODE_FALLBACK, status) ?? "BAD_REQUEST",
      detail: fe.message ?? "bad request",
      headers: {},
    };
  }
  request.log.error({ err: error }, "unhandled error");
  return { code: "INTERNAL", detail: "internal error", headers: {} };
}

/** A schema validation failure names the parameter (`limit: must be <= 100`); SPEC §4. */
function classifyValidation(error: Partial<FastifyError>): Classified {
  const first = error.validation?.[0];
  const params = (first?.params ?? {}) as { missingProperty?: unknown; additionalProperty?: unknown };
  const context = error.validationContext ?? "request";
  const fromPath = first?.instancePath?.split("/").filter(Boolean)[0];
  const unknown = typeof params.additionalProperty === "string" ? params.additionalProperty : undefined;
  const missing = typeof params.missingProperty === "string" ? params.missingProperty : undefined;
  const name = fromPath ?? missing ?? unknown ?? context;
  const message =
    unknown !== undefined && fromPath === undefined
      ? `is not a known ${context === "body" ? "field" : "parameter"}`
      : first?.message;
  const code: ErrorCode =
    context === "body" ? "INVALID_BODY" : (own(PARAM_CODES, name) ?? "INVALID_PARAMETER");
  return { code, detail: `${name}: ${message ?? "is invalid"}`, headers: {} };
}

/** `map[key]` for own keys only: a parameter named `constructor` must not find `Object.prototype.constructor`. */
function own<K extends string | number, V>(map: Partial<Record<K, V>>, key: K | undefined): V | undefined {
  return key !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}
