/** A price as a price API states it, before the engine's checks (positive, at most an hour old). */
export type ApiQuote = { usd: number; at: Date };

/** One call's answer: a quote per priced address (lowercase), and the reason for each address left out. */
export type ApiBatchResult = { quotes: Map<string, ApiQuote>; errors: Map<string, string> };

/** A plain JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
