import { expect, test } from "vitest";
import { CATCHING_UP_BLOCKS, heapWorkFor, isCatchingUp } from "./catchingUp.ts";

/** An indexer `lagBlocks` behind a head at block 1,000 (null: no cycle has read the head). */
const status = (lagBlocks: number | null) => ({
  chainHead: lagBlocks === null ? null : 1000,
  indexedBlock: lagBlocks === null ? null : 1000 - lagBlocks,
});

test("default: an indexer at its target is not catching up, however many confirmations it keeps", () => {
  expect(isCatchingUp(status(0), 0)).toBe(false);
  expect(isCatchingUp(status(12), 12)).toBe(false);
  expect(isCatchingUp(status(65 + CATCHING_UP_BLOCKS), 65)).toBe(false);
});

test("behavior: more than CATCHING_UP_BLOCKS below its target is catching up; an unknown head is not", () => {
  expect(CATCHING_UP_BLOCKS).toBe(10);
  expect(isCatchingUp(status(11), 0)).toBe(true);
  expect(isCatchingUp(status(12 + 11), 12)).toBe(true);
  expect(isCatchingUp(status(null), 0)).toBe(false);
  expect(isCatchingUp({ chainHead: 1000, indexedBlock: null }, 0)).toBe(false);
});

test("behavior: the heap is tuned for indexing while a backfill runs or is about to, else for serving", () => {
  const running = (lagBlocks: number | null, indexedBlock?: null) => ({
    ...status(lagBlocks),
    ...(indexedBlock === null ? { indexedBlock } : {}),
    running: true,
    backfilling: false,
  });
  // an API replica (no indexer), a standby writer, an indexer following the head
  expect(heapWorkFor(null, 0)).toBe("serving");
  const idle = { running: false, backfilling: false };
  expect(heapWorkFor({ ...status(null), ...idle }, 0)).toBe("serving");
  expect(heapWorkFor({ ...status(0), ...idle }, 0)).toBe("serving");
  expect(heapWorkFor(running(12), 12)).toBe("serving");
  // a cycle that has not read the head yet, a first backfill before its first commit, a backfill
  expect(heapWorkFor(running(null), 0)).toBe("indexing");
  expect(heapWorkFor(running(500, null), 0)).toBe("indexing");
  expect(heapWorkFor({ ...status(500), indexedBlock: null, ...idle }, 0)).toBe("indexing");
  expect(heapWorkFor(running(CATCHING_UP_BLOCKS + 1), 0)).toBe("indexing");
  expect(heapWorkFor({ ...status(CATCHING_UP_BLOCKS + 1), ...idle }, 0)).toBe("indexing");
  // the end of a backfill cycle: 3 blocks left, but the cycle began far below its target
  expect(heapWorkFor({ ...running(3), backfilling: true }, 0)).toBe("indexing");
});
