import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { WS_ERROR_CODES } from "./wsErrorCodes.ts";

describe("WS_ERROR_CODES", () => {
  test("default: docs/websocket.md documents every code, and no other", () => {
    const docs = readFileSync(new URL("../../docs/websocket.md", import.meta.url), "utf8");
    const section = docs.slice(docs.indexOf("## Error codes"), docs.indexOf("## Limits"));
    const documented = [...section.matchAll(/^\| `([A-Z_]+)`\s*\|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(WS_ERROR_CODES).sort());
  });
});
