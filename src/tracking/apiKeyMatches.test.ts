import { expect, test } from "vitest";
import { apiKeyMatches } from "./apiKeyMatches.ts";

const KEYS = ["key-current-0123456789", "key-retiring"];

test("default: a configured key matches", () => {
  expect(apiKeyMatches("key-current-0123456789", KEYS)).toBe(true);
});

test("behavior: every configured key matches (rotation)", () => {
  expect(apiKeyMatches("key-retiring", KEYS)).toBe(true);
});

test("error: a wrong key, a prefix or a longer value does not match", () => {
  expect(apiKeyMatches("key-current", KEYS)).toBe(false);
  expect(apiKeyMatches("key-current-0123456789x", KEYS)).toBe(false);
  expect(apiKeyMatches("KEY-RETIRING", KEYS)).toBe(false);
});

test("error: a missing, empty or repeated header does not match", () => {
  expect(apiKeyMatches(undefined, KEYS)).toBe(false);
  expect(apiKeyMatches("", KEYS)).toBe(false);
  expect(apiKeyMatches(["key-retiring", "key-retiring"], KEYS)).toBe(false);
});

test("args: no configured keys matches nothing", () => {
  expect(apiKeyMatches("anything", [])).toBe(false);
});
