import { RetryableError } from "../internal/errors.ts";

/**
 * A price API call failed as a whole (unreachable, timed out, non-2xx, unreadable body). Retryable: the next
 * lookup tries again. The message never quotes the request URL, which carries the API key (Alchemy).
 */
export class PriceApiError extends RetryableError {
  override name = "PriceApiError";
}
