import fc from "fast-check";
import Fastify from "fastify";
import Type from "typebox";
import { afterAll, describe, expect, test } from "vitest";
import type { TokenConfig } from "../config/schema.ts";
import type { TransactionValue } from "../prices/transactionValues.ts";
import type { EventSummary, SummaryTx, TransferSummary } from "../store/transactionSummaries.ts";
import { TransactionSchema } from "./schemas/transaction.ts";
import { toTransactionJson } from "./toTransactionJson.ts";

/**
 * The transaction routes write their cached bodies with `JSON.stringify` (routes/transactions.ts), relying on
 * `toTransactionJson` building exactly the schema's object in the schema's field order. Here any transaction
 * it can be given is written both ways and compared byte for byte with Fastify's compiled serializer.
 */
describe("toTransactionJson's object, written by JSON.stringify", () => {
  const app = Fastify();
  let current: unknown = null;
  app.get("/tx", { schema: { response: { 200: TransactionSchema } } }, async () => current);
  app.get(
    "/list",
    { schema: { response: { 200: Type.Object({ transactions: Type.Array(TransactionSchema) }) } } },
    async () => current,
  );
  afterAll(() => app.close());

  const TOKEN = "0x00000000000000000000000000000000000000aa";
  const token: TokenConfig = {
    address: TOKEN,
    symbol: 'Q"\\T\u2028',
    name: "Quote",
    decimals: 6,
    protocol: "p",
    color: "#000000",
    logo: "",
    official: true,
    exclusive: true,
  };
  const tokens = new Map([[TOKEN, token]]);

  // Any UTF-16 code unit, lone surrogates and control characters included: both writers must escape alike.
  const text = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) });
  const hex = (bytes: number) =>
    fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString("hex")}`);
  const address = fc.oneof(hex(20), fc.constant(TOKEN));
  const uint = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });
  const index = fc.nat({ max: 100_000 });
  // Argument names without line terminators: the schema's `Type.Record(Type.String(), …)` is
  // `patternProperties: { "^.*$": … }`, whose `.` does not match them, so Fastify's serializer drops such a key
  // where JSON.stringify (and the WebSocket's messages) keep it. An ABI's names are Solidity identifiers.
  const name = text.filter((key) => !/[\n\r\u2028\u2029]/.test(key));
  const args = fc.dictionary(name, fc.jsonValue());
  // USD values are finite (prices/transactionValues.ts); for NaN or ±Infinity the two would differ (Fastify's
  // serializer fails the request, JSON.stringify writes null).
  const usd = fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null });

  const tx: fc.Arbitrary<SummaryTx> = fc.record({
    hash: hex(32),
    blockNumber: fc.nat(),
    blockHash: hex(32),
    transactionIndex: index,
    blockTimestamp: fc.date({ min: new Date(0), max: new Date("2200-01-01"), noInvalidDate: true }),
    fromAddress: address,
    toAddress: fc.option(address, { nil: null }),
    contractAddress: fc.option(address, { nil: null }),
    valueWei: uint,
    gasUsed: uint,
    gasPrice: uint,
    status: fc.boolean(),
    protocol: text,
    actionType: text,
    functionName: text,
    functionArgs: args,
    source: text,
  });
  const event: fc.Arbitrary<EventSummary> = fc.record({
    logIndex: index,
    address,
    eventName: fc.option(text, { nil: null }),
    eventArgs: fc.option(args, { nil: null }),
  });
  const transfer: fc.Arbitrary<TransferSummary> = fc.record({
    logIndex: index,
    tokenAddress: address,
    fromAddress: address,
    toAddress: address,
    amount: uint,
  });
  const transaction = fc
    .record({
      tx,
      events: fc.array(event, { maxLength: 4 }),
      transfers: fc.array(transfer, { maxLength: 4 }),
      valueUsd: usd,
      transferValues: fc.array(usd, { maxLength: 4 }),
    })
    .map(({ tx, events, transfers, valueUsd, transferValues }) => {
      const value: TransactionValue = {
        valueUsd,
        transfers: new Map(
          transfers.flatMap((t, i) => (transferValues[i] == null ? [] : [[t.logIndex, transferValues[i]!]])),
        ),
      };
      return toTransactionJson(tx, events, transfers, tokens, value);
    });

  test("property: a Transaction and a list of them are the bytes Fastify's schema serializer writes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(transaction, { minLength: 1, maxLength: 3 }), async (jsons) => {
        current = jsons[0];
        const one = await app.inject({ url: "/tx" });
        expect(one.statusCode).toBe(200);
        expect(JSON.stringify(current)).toBe(one.body);
        current = { transactions: jsons };
        const list = await app.inject({ url: "/list" });
        expect(list.statusCode).toBe(200);
        expect(JSON.stringify(current)).toBe(list.body);
      }),
      { numRuns: 300 },
    );
  });
});
