import { describe, expect, test } from "vitest";
import { ConfigError } from "../internal/errors.ts";
import { logFormat } from "./logFormat.ts";

describe("logFormat", () => {
  test("default: pretty on a terminal, json otherwise", () => {
    expect(logFormat(undefined, true)).toBe("pretty");
    expect(logFormat(undefined, false)).toBe("json");
    expect(logFormat("", true)).toBe("pretty");
  });

  test("args: LOG_FORMAT wins over the terminal check", () => {
    expect(logFormat("json", true)).toBe("json");
    expect(logFormat("pretty", false)).toBe("pretty");
  });

  test("error: another value is a config error naming it", () => {
    expect(() => logFormat("text", true)).toThrow(ConfigError);
    expect(() => logFormat("text", true)).toThrow("LOG_FORMAT: must be pretty or json (got 'text')");
  });
});
