/**
 * protoscan's error hierarchy (after viem `errors/base.ts` and Ponder `internal/errors.ts`).
 *
 * - `shortMessage` is safe to show to a user or write to a log: it never carries credentials.
 * - `details` is extra context (also credential-free).
 * - Retryability is a property of the class, so call sites ask `error instanceof RetryableError`
 *   instead of matching strings.
 */
export class BaseError extends Error {
  override name = "BaseError";
  readonly shortMessage: string;
  readonly details: string | undefined;

  constructor(shortMessage: string, options: { cause?: unknown; details?: string } = {}) {
    super(options.details ? `${shortMessage}\n\nDetails: ${options.details}` : shortMessage, {
      cause: options.cause,
    });
    this.shortMessage = shortMessage;
    this.details = options.details;
  }
}

/** Worth trying again later (the same request may succeed). */
export class RetryableError extends BaseError {
  override name = "RetryableError";
}

/** Trying again will not help. */
export class NonRetryableError extends BaseError {
  override name = "NonRetryableError";
}

/** The configuration file or environment is wrong; the process cannot start. */
export class ConfigError extends NonRetryableError {
  override name = "ConfigError";
  /** One line per problem, each naming the key path (`rpc.urls[0]: …`). */
  readonly issues: string[];

  constructor(issues: string[], options: { cause?: unknown } = {}) {
    super(issues.length === 1 ? issues[0]! : `invalid configuration:\n  ${issues.join("\n  ")}`, options);
    this.issues = issues;
  }
}

/** How deep `walk` follows a cause chain (a cycle, or a pathological wrapper, must not hang it). */
const MAX_CAUSE_DEPTH = 10;

/**
 * The first error of `error`'s cause chain, itself included, that `matches`, or undefined (viem
 * `BaseError.walk`). Library wrappers (viem around what the transport threw, Drizzle around the driver's
 * error) hide the error protoscan classified; this finds it without a hand-written loop at each call site.
 */
export function walk<T>(error: unknown, matches: (error: unknown) => error is T): T | undefined {
  let current = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && typeof current === "object" && current !== null; depth++) {
    if (matches(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Narrow an unknown thrown value to a message that is safe to log. */
export function errorMessage(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage;
  if (error instanceof Error) return error.message;
  return String(error);
}
