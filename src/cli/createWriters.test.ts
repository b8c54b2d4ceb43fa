import { getEventListeners } from "node:events";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../../test/helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../../test/helpers/pipeline.ts";
import { createLocalBroadcaster } from "../ingest/broadcaster.ts";
import { createInboxSignal } from "../webhooks/inboxSignal.ts";
import { createWriters } from "./createWriters.ts";

let chain: DemoChain;
let testDb: TestDatabase;
let pipeline: TestPipeline;

beforeAll(async () => {
  chain = await setupDemoChain();
  testDb = await createTestDatabase();
  pipeline = await createTestPipeline({ config: chain.config, database: testDb.database });
});

afterAll(async () => {
  await pipeline?.close();
  await testDb?.cleanup();
  await chain?.anvil.stop();
});

test("behavior: writers started and stopped again and again leave no listener on the shutdown signal", async () => {
  const writers = createWriters(pipeline.common, {
    database: testDb.database,
    chain: pipeline.chain,
    ingest: pipeline.ingest,
    events: createLocalBroadcaster(),
    inboxSignal: createInboxSignal(),
  });
  const shutdownSignal = pipeline.common.shutdown.signal;
  const before = getEventListeners(shutdownSignal, "abort").length;
  // A process that loses and wins the writer lock builds new writers each time.
  for (let i = 0; i < 12; i++) {
    writers.start();
    expect(writers.indexer()).not.toBeNull();
    await writers.stop();
  }
  expect(getEventListeners(shutdownSignal, "abort")).toHaveLength(before);
});
