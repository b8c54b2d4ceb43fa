import { createHmac } from "node:crypto";
import { describe, expect, test } from "vitest";
import { hmacHex, hmacMatches } from "./hmacMatches.ts";

const body = '{"id":"whevt_1","event":{"activity":[]}}';

describe("hmacMatches", () => {
  test("default: the hex HMAC-SHA256 of the message under the key", () => {
    const signature = createHmac("sha256", "whsec_test").update(body).digest("hex");
    expect(hmacHex(body, "whsec_test")).toBe(signature);
    expect(hmacMatches(body, signature, ["whsec_test"])).toBe(true);
  });

  test("args: any of several keys (rotation), upper-case hex", () => {
    const signature = hmacHex(body, "new-key").toUpperCase();
    expect(hmacMatches(body, signature, ["old-key", "new-key"])).toBe(true);
    expect(hmacMatches(body, hmacHex(body, "old-key"), ["old-key", "new-key"])).toBe(true);
  });

  test("error: another key, another body, or a changed byte", () => {
    const signature = hmacHex(body, "whsec_test");
    expect(hmacMatches(body, signature, ["other"])).toBe(false);
    expect(hmacMatches(`${body} `, signature, ["whsec_test"])).toBe(false);
    const flipped = (signature[0] === "0" ? "1" : "0") + signature.slice(1);
    expect(hmacMatches(body, flipped, ["whsec_test"])).toBe(false);
  });

  test("error: missing, malformed or wrong-length signatures never match (and never throw)", () => {
    const signature = hmacHex(body, "k");
    for (const bad of [undefined, "", "zz", signature.slice(2), `${signature}00`, `sha256=${signature}`]) {
      expect(hmacMatches(body, bad, ["k"])).toBe(false);
    }
    expect(hmacMatches(body, signature, [])).toBe(false);
  });
});
