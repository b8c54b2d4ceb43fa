import { errorMessage } from "../internal/errors.ts";
import { redactSecrets } from "../internal/redact.ts";
import { PriceApiError } from "./errors.ts";

export type FetchJsonOptions = {
  method: "GET" | "POST";
  body?: unknown;
  /** the whole call, headers and body included (default 5 s) */
  timeoutMs?: number;
  /** aborts the call when the process shuts down */
  signal?: AbortSignal;
  /** strings that must not appear in an error message (the API key) */
  secrets: readonly string[];
  /** how the provider is named in messages */
  provider: string;
};

const DEFAULT_TIMEOUT_MS = 5000;

/**
 * One HTTP call to a price API, answered with its parsed JSON body (`unknown`: the caller validates it).
 *
 * @throws {PriceApiError} when the provider cannot be reached, times out, answers a non-2xx status or a body
 *   that is not JSON. The message names the provider and the status, never the URL (it carries the API key)
 *   nor the provider's body.
 */
export async function fetchJson(url: string, options: FetchJsonOptions): Promise<unknown> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method,
      headers: {
        accept: "application/json",
        ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal,
    });
  } catch (error) {
    const reason = timeout.aborted ? "timed out" : redactSecrets(describe(error), options.secrets);
    throw new PriceApiError(`${options.provider} price API unreachable: ${reason}`);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new PriceApiError(`${options.provider} price API answered HTTP ${response.status}`);
  }
  try {
    return await response.json();
  } catch {
    throw new PriceApiError(`${options.provider} price API answered a body that is not JSON`);
  }
}

/** A fetch failure's message with its cause (undici puts the useful part, e.g. ECONNREFUSED, there). */
function describe(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const code =
    cause && typeof cause === "object" && "code" in cause && typeof cause.code === "string"
      ? ` (${cause.code})`
      : "";
  return `${errorMessage(error)}${code}`;
}
