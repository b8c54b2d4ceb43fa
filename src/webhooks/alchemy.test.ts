import { describe, expect, test } from "vitest";
import type { Config } from "../config/schema.ts";
import { alchemyAddressActivity, alchemyGraphql, alchemyHeaders } from "./_test/fixtures.ts";
import { alchemy, alchemyDeliveryId, parseAlchemyPayload } from "./alchemy.ts";

const h = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as const;
const a = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as const;
const KEY = "whsec_test_key";

const activity = alchemyAddressActivity(
  [
    {
      hash: h(1),
      blockNum: 7,
      fromAddress: a(1),
      toAddress: a(2),
      category: "external",
      value: 0.2,
      rawValue: 2n * 10n ** 17n,
    },
    {
      hash: h(1),
      blockNum: 7,
      fromAddress: a(2),
      toAddress: a(3),
      category: "internal",
      value: 0.2,
      rawValue: 2n * 10n ** 17n,
    },
    {
      hash: h(2),
      blockNum: 7,
      fromAddress: a(1),
      toAddress: a(3),
      category: "token",
      value: 1.5,
      rawValue: 15n * 10n ** 17n,
      asset: "DEMO",
      contract: a(9),
    },
  ],
  { id: "whevt_vq499kv7elmlbp2v" },
);

describe("alchemy.verify", () => {
  const body = JSON.stringify(activity);
  const verify = (headers: Record<string, string>, rawBody = body, secrets = [KEY]) =>
    alchemy.verify({ headers, rawBody, secrets, nowMs: Date.now() });

  test("default: X-Alchemy-Signature over the raw body", () => {
    expect(verify(alchemyHeaders(body, KEY))).toEqual({ ok: true });
  });

  test("args: the second of two configured keys (rotation)", () => {
    expect(verify(alchemyHeaders(body, KEY), body, ["whsec_old", KEY])).toEqual({ ok: true });
  });

  test("error: missing signature", () => {
    expect(verify({ "content-type": "application/json" })).toEqual({
      ok: false,
      reason: "missing or invalid x-alchemy-signature",
    });
  });

  test("error: signed with another key, or the body re-serialized", () => {
    expect(verify(alchemyHeaders(body, "whsec_other")).ok).toBe(false);
    const reformatted = JSON.stringify(activity, null, 2);
    expect(verify(alchemyHeaders(body, KEY), reformatted).ok).toBe(false);
  });
});

describe("alchemy.secrets", () => {
  test("default: the signing keys, null without a config section", () => {
    const withKeys = { webhooks: { alchemy: { signingKeys: ["k1", "k2"] } } } as unknown as Config;
    expect(alchemy.secrets(withKeys)).toEqual(["k1", "k2"]);
    expect(alchemy.secrets({ webhooks: {} } as unknown as Config)).toBeNull();
  });
});

describe("alchemyDeliveryId", () => {
  test("default: the envelope id", () => {
    expect(alchemyDeliveryId(activity, "{}")).toBe("whevt_vq499kv7elmlbp2v");
  });

  test("behavior: without an id, the SHA-256 of the body (a replay still dedupes)", () => {
    const id = alchemyDeliveryId({ event: {} }, '{"event":{}}');
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(alchemyDeliveryId({ event: {} }, '{"event":{}}')).toBe(id);
    expect(alchemyDeliveryId({ id: "" }, '{"event":{ }}')).not.toBe(id);
  });

  test("behavior: an id the database could not store (U+0000, over 200 characters) gives way to the SHA-256", () => {
    const body = '{"id":"whevt_a\\u0000b"}';
    expect(alchemyDeliveryId(JSON.parse(body), body)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(alchemyDeliveryId({ id: "x".repeat(201) }, "{}")).toMatch(/^sha256:/);
    expect(alchemyDeliveryId({ id: "x".repeat(200) }, "{}")).toBe("x".repeat(200));
  });
});

describe("parseAlchemyPayload", () => {
  test("ADDRESS_ACTIVITY: every activity's hash, each once", () => {
    expect(parseAlchemyPayload(activity)).toEqual({ hashes: [h(1), h(2)] });
  });

  test("GRAPHQL: every transaction.hash in event.data (block.logs[].transaction)", () => {
    const log = { account: a(9), topics: [h(7)], data: "0x" as const, from: a(1), to: a(9), status: 1 };
    const payload = alchemyGraphql({ hash: h(100), number: 12, timestamp: 1_700_000_000 }, [
      { ...log, txHash: h(3), index: 0 },
      { ...log, txHash: h(3), index: 1 },
      { ...log, txHash: h(4), index: 2 },
    ]);
    expect(parseAlchemyPayload(payload)).toEqual({ hashes: [h(3), h(4)] });
  });

  test("GRAPHQL: block.transactions[].hash too", () => {
    const payload = {
      type: "GRAPHQL",
      event: { data: { block: { transactions: [{ hash: h(5) }, { hash: h(6) }] } } },
    };
    expect(parseAlchemyPayload(payload)).toEqual({ hashes: [h(5), h(6)] });
  });

  test("behavior: the event.error variant carries the error and no hash", () => {
    const payload = { id: "whevt_x", type: "GRAPHQL", event: { error: "query timed out", data: null } };
    expect(parseAlchemyPayload(payload)).toEqual({ hashes: [], error: "query timed out" });
    expect(parseAlchemyPayload({ event: { error: { code: 500 } } })).toEqual({
      hashes: [],
      error: '{"code":500}',
    });
  });

  test("behavior: unknown shapes and malformed hashes yield nothing", () => {
    expect(parseAlchemyPayload(null)).toEqual({ hashes: [] });
    expect(parseAlchemyPayload([1, 2])).toEqual({ hashes: [] });
    expect(parseAlchemyPayload({ type: "NFT_ACTIVITY", event: { foo: 1 } })).toEqual({ hashes: [] });
    expect(parseAlchemyPayload({ event: { activity: [{ hash: "0x12" }, null, { hash: 5 }] } })).toEqual({
      hashes: [],
    });
  });
});
