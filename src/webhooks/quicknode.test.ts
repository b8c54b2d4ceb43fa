import { describe, expect, test } from "vitest";
import type { Config } from "../config/schema.ts";
import { quicknodeDelivery, quicknodeHeaders } from "./_test/fixtures.ts";
import { hmacHex } from "./hmacMatches.ts";
import { parseQuickNodePayload, quicknode } from "./quicknode.ts";

const h = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as const;
const a = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as const;
const TOKEN = "qn_security_token";
const NOW = Date.UTC(2026, 10, 21, 8, 0, 0);
const nowSeconds = NOW / 1000;

const log = (txHash: `0x${string}`, logIndex: number) => ({
  address: a(9),
  blockHash: h(100),
  blockNumber: "0xc",
  data: "0x",
  logIndex: `0x${logIndex.toString(16)}`,
  removed: false,
  topics: [h(7)],
  transactionHash: txHash,
  transactionIndex: "0x0",
});
const receipt = (txHash: `0x${string}`) => ({
  blockHash: h(100),
  blockNumber: "0xc",
  contractAddress: null,
  cumulativeGasUsed: "0x5208",
  effectiveGasPrice: "0x3b9aca00",
  from: a(1),
  gasUsed: "0x5208",
  logs: [log(txHash, 0)],
  logsBloom: `0x${"0".repeat(512)}`,
  status: "0x1",
  to: a(9),
  transactionHash: txHash,
  transactionIndex: "0x0",
  type: "0x2",
});

describe("quicknode.verify", () => {
  const body = JSON.stringify(quicknodeDelivery("receipts", [[receipt(h(1))]], 12));
  const verify = (headers: Record<string, string>, rawBody = body, secrets = [TOKEN]) =>
    quicknode.verify({ headers, rawBody, secrets, nowMs: NOW });

  test("default: x-qn-signature over nonce + timestamp + body, timestamp in the window", () => {
    const headers = quicknodeHeaders(body, TOKEN, { nonce: "n-1", timestampSeconds: nowSeconds });
    expect(headers["x-qn-signature"]).toBe(hmacHex(`n-1${nowSeconds}${body}`, TOKEN));
    expect(verify(headers)).toEqual({ ok: true });
  });

  test("args: timestamps 300 s either side are accepted; the second of two tokens", () => {
    for (const skew of [-300, 300]) {
      const headers = quicknodeHeaders(body, TOKEN, { timestampSeconds: nowSeconds + skew });
      expect(verify(headers, body, ["old", TOKEN])).toEqual({ ok: true });
    }
  });

  test("error: stale or future timestamp (even correctly signed)", () => {
    for (const skew of [-301, 301, -86_400]) {
      const headers = quicknodeHeaders(body, TOKEN, { timestampSeconds: nowSeconds + skew });
      expect(verify(headers)).toEqual({ ok: false, reason: "x-qn-timestamp is not within 300 s of now" });
    }
    const ms = quicknodeHeaders(body, TOKEN, { timestampSeconds: NOW });
    expect(verify(ms).ok).toBe(false);
  });

  test("error: missing headers, another token, a changed nonce or body", () => {
    const headers = quicknodeHeaders(body, TOKEN, { timestampSeconds: nowSeconds });
    expect(verify({}).ok).toBe(false);
    for (const name of ["x-qn-nonce", "x-qn-timestamp", "x-qn-signature"]) {
      const { [name]: _dropped, ...rest } = headers;
      expect(verify(rest).ok).toBe(false);
    }
    expect(verify(quicknodeHeaders(body, "other", { timestampSeconds: nowSeconds }))).toEqual({
      ok: false,
      reason: "invalid x-qn-signature",
    });
    expect(verify({ ...headers, "x-qn-nonce": "another" }).ok).toBe(false);
    expect(verify(headers, body.replace("0xc", "0xd")).ok).toBe(false);
  });

  test("behavior: the delivery id is the nonce", () => {
    const headers = quicknodeHeaders(body, TOKEN, { nonce: "6a1f0c", timestampSeconds: nowSeconds });
    expect(quicknode.deliveryId({ headers, payload: JSON.parse(body), rawBody: body })).toBe("6a1f0c");
  });

  test("behavior: secrets are the security tokens, null without a config section", () => {
    const config = { webhooks: { quicknode: { securityTokens: ["t"] } } } as unknown as Config;
    expect(quicknode.secrets(config)).toEqual(["t"]);
    expect(quicknode.secrets({ webhooks: {} } as unknown as Config)).toBeNull();
  });
});

describe("parseQuickNodePayload", () => {
  test("logs dataset", () => {
    const payload = quicknodeDelivery("logs", [[log(h(1), 0), log(h(1), 1), log(h(2), 2)], []], 12);
    expect(parseQuickNodePayload(payload)).toEqual({ hashes: [h(1), h(2)] });
  });

  test("receipts dataset (receipts and their logs)", () => {
    const payload = quicknodeDelivery("receipts", [[receipt(h(3)), receipt(h(4))]], 12);
    expect(parseQuickNodePayload(payload)).toEqual({ hashes: [h(3), h(4)] });
  });

  test("block_with_receipts dataset", () => {
    const payload = quicknodeDelivery(
      "block_with_receipts",
      [{ block: { number: "0xc", hash: h(100), transactions: [{ hash: h(5) }] }, receipts: [receipt(h(5))] }],
      12,
    );
    expect(parseQuickNodePayload(payload)).toEqual({ hashes: [h(5)] });
  });

  test("filter output, any shape", () => {
    const payload = quicknodeDelivery("filter", [{ matches: [{ tx: { transactionHash: h(6) } }] }], 12);
    expect(parseQuickNodePayload(payload)).toEqual({ hashes: [h(6)] });
  });

  test("behavior: a bare dataset (metadata in headers) is read whole; metadata is not data", () => {
    expect(parseQuickNodePayload([[log(h(7), 0)]])).toEqual({ hashes: [h(7)] });
    expect(parseQuickNodePayload({ data: [], metadata: { transactionHash: h(8) } })).toEqual({ hashes: [] });
    expect(parseQuickNodePayload(null)).toEqual({ hashes: [] });
  });
});
