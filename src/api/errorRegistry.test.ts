import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { ApiError, ERROR_CODES, ERROR_REGISTRY, isErrorCode, problem } from "./errorRegistry.ts";

const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");

/** `| [CODE](#CODE) | status | title |` rows of the summary table (cells may be padded). */
function tableRows(): { code: string; anchor: string; status: number; title: string }[] {
  return [...doc.matchAll(/^\|\s*\[([A-Z_]+)\]\(#([A-Za-z_]+)\)\s*\|\s*(\d{3})\s*\|\s*([^|]+?)\s*\|$/gm)].map(
    (m) => ({
      code: m[1]!,
      anchor: m[2]!,
      status: Number(m[3]),
      title: m[4]!.trim(),
    }),
  );
}

/** Codes with an explicit anchor (`<a id="CODE">`), which is what `/docs/errors#CODE` resolves to. */
function anchors(): string[] {
  return [...doc.matchAll(/^<a id="([^"]+)"><\/a>$/gm)].map((m) => m[1]!);
}

describe("error registry", () => {
  test("default: every code is documented with its status and title", () => {
    const rows = tableRows();
    expect(rows.map((r) => r.code).sort()).toEqual([...ERROR_CODES].sort());
    for (const row of rows) {
      expect(row.anchor).toBe(row.code);
      expect(isErrorCode(row.code)).toBe(true);
      if (!isErrorCode(row.code)) continue;
      expect({ status: row.status, title: row.title }).toEqual(ERROR_REGISTRY[row.code]);
    }
  });

  test("default: every code has a section under its anchor, and every anchor is a code", () => {
    expect(anchors().sort()).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) {
      const { status } = ERROR_REGISTRY[code];
      // the anchor is followed by the section heading naming the code and status, then an explanation
      expect(doc).toMatch(new RegExp(`<a id="${code}"></a>\\s+### ${code} — ${status}\\n\\n\\S`));
    }
  });

  test("default: codes are upper snake case and statuses are errors", () => {
    for (const code of ERROR_CODES) {
      expect(code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
      expect(ERROR_REGISTRY[code].status).toBeGreaterThanOrEqual(400);
      expect(ERROR_REGISTRY[code].status).toBeLessThan(600);
    }
  });

  test("default: SPEC §4 codes are all present", () => {
    const spec = [
      "INVALID_ADDRESS",
      "INVALID_TX_HASH",
      "INVALID_PARAMETER",
      "INVALID_BODY",
      "NOT_FOUND",
      "TOKEN_NOT_TRACKED",
      "PROTOCOL_NOT_FOUND",
      "TX_NOT_FOUND",
      "NOT_RELEVANT",
      "INVALID_SIGNATURE",
      "PAYLOAD_TOO_LARGE",
      "UNSUPPORTED_MEDIA_TYPE",
      "RATE_LIMITED",
      "UPSTREAM_UNAVAILABLE",
      "INTERNAL",
    ];
    for (const code of spec) expect(isErrorCode(code), code).toBe(true);
  });

  test("default: problem() builds the RFC 9457 body with a type pointing at the docs anchor", () => {
    expect(problem("TX_NOT_FOUND", "transaction 0xab is not indexed")).toEqual({
      type: "/docs/errors#TX_NOT_FOUND",
      title: "Transaction not found",
      status: 404,
      detail: "transaction 0xab is not indexed",
      code: "TX_NOT_FOUND",
    });
  });

  test("args: isErrorCode rejects non-codes", () => {
    for (const value of ["toString", "__proto__", "invalid_address", "", 400, null, undefined]) {
      expect(isErrorCode(value)).toBe(false);
    }
  });

  test("default: ApiError carries code, detail and headers", () => {
    const error = new ApiError("RATE_LIMITED", "slow down", { "retry-after": "5" });
    expect(error).toBeInstanceOf(Error);
    expect([error.code, error.detail, error.message, error.headers]).toEqual([
      "RATE_LIMITED",
      "slow down",
      "slow down",
      { "retry-after": "5" },
    ]);
  });
});
