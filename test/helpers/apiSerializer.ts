import { transactionJsonOf } from "../../src/api/toTransactionJson.ts";
import type { Config } from "../../src/config/schema.ts";

/**
 * The API's transaction serializer, for the real-time tests: `src/realtime/` imports nothing from `src/api/`
 * (the hub is handed how to serialize a transaction, docs/development.md), so the tests that wire a hub the way
 * `buildApp` does take the serializer from here, where both layers may meet.
 */
export function apiTransactionJson(config: Pick<Config, "tokens">): ReturnType<typeof transactionJsonOf> {
  return transactionJsonOf(config);
}
