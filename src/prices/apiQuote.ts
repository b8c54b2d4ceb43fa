/** A price as a price API states it, before the engine's checks (positive, at most an hour old). */
export type ApiQuote = { usd: number; at: Date };

/** One call's answer: a quote per priced address (lowercase), and the reason for each address left out. */
export type ApiBatchResult = { quotes: Map<string, ApiQuote>; errors: Map<string, string> };
