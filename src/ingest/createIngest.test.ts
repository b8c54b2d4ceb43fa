import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../../test/helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../../test/helpers/pipeline.ts";
import type { ChainTransaction } from "../decode/decodeTransaction.ts";
import { createLogger } from "../internal/logger.ts";
import { getTransaction } from "../store/transactionReads.ts";
import { trackTxs } from "../tracking/_test/trackTxs.ts";

/** Every call of `decodeTransaction`, and the hash whose decoding throws (as a bug in a decoder would). */
const decoding = vi.hoisted(() => ({ calls: [] as { hash: string; input: string }[], failing: "" }));

vi.mock("../decode/decodeTransaction.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../decode/decodeTransaction.ts")>();
  return {
    ...original,
    decodeTransaction: (...args: Parameters<typeof original.decodeTransaction>) => {
      const tx: ChainTransaction = args[1];
      decoding.calls.push({ hash: tx.hash.toLowerCase(), input: tx.input });
      if (tx.hash.toLowerCase() === decoding.failing && tx.input !== "0x") throw new Error("decoder bug");
      return original.decodeTransaction(...args);
    },
  };
});

let chain: DemoChain;
let db: TestDatabase;
let pipeline: TestPipeline;
const lines: string[] = [];

beforeAll(async () => {
  chain = await setupDemoChain();
  db = await createTestDatabase();
  const logger = createLogger({ destination: { write: (line: string) => lines.push(line) } });
  pipeline = await createTestPipeline({ config: chain.config, database: db.database, logger });
});

afterAll(async () => {
  await pipeline?.close();
  await db?.cleanup();
  await chain?.anvil.stop();
});

test("behavior: ingestHashes decodes a transaction once, so a decode failure is logged once and stored undecoded", async () => {
  const hash = (await trackTxs(chain).disperseEther()).toLowerCase();
  decoding.failing = hash;
  const outcomes = await pipeline.ingest.ingestHashes([hash as `0x${string}`], "webhook");
  expect(outcomes).toEqual([{ status: "indexed", hash, inserted: true }]);
  // once to judge relevance and decode, once more without the input for what the chain says (the fallback)
  expect(decoding.calls.filter((c) => c.hash === hash).map((c) => c.input === "0x")).toEqual([false, true]);
  const failures = lines.filter((l) => l.includes("transaction failed to decode"));
  expect(failures).toHaveLength(1);
  expect(JSON.parse(failures[0]!)).toMatchObject({ tx: hash, err: "decoder bug" });
  const input = decoding.calls.find((c) => c.hash === hash)!.input;
  expect((await getTransaction(db.database.db, hash))?.tx).toMatchObject({
    hash,
    source: "webhook",
    functionName: input.slice(0, 10),
    actionType: "unknown",
    functionArgs: {},
  });
});
