import { ConfigError } from "../../internal/errors.ts";

/** Run `fn`, expect it to throw a `ConfigError`, and return its issues (test helper). */
export function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error("expected a ConfigError, nothing was thrown");
}

/** Await `promise`, expect it to reject with a `ConfigError`, and return its issues (test helper). */
export async function issuesOfAsync(promise: Promise<unknown>): Promise<string[]> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error("expected a ConfigError, nothing was thrown");
}
