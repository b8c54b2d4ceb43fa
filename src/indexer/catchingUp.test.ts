import { expect, test } from "vitest";
import { CATCHING_UP_BLOCKS, isCatchingUp } from "./catchingUp.ts";

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
