import { isTransactionConflict } from "./errors.ts";

/** Attempts of one transaction before a conflict is given up on. */
const ATTEMPTS = 5;

/**
 * Run `transaction` (one whole database transaction, safe to run again) and run it again when PostgreSQL
 * aborted it for a conflict with concurrent writers: polling commits, rollbacks, track-tx and the inbox worker
 * write the same rows (balances, block headers) in different orders. Up to 5 attempts, a short random pause
 * between them; any other error is thrown at once.
 */
export async function retryConflicts<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (error) {
      if (attempt >= ATTEMPTS || !isTransactionConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * 20 + Math.random() * 50));
    }
  }
}
