import { expect, test } from "vitest";
import { isRecord } from "./isRecord.ts";

test("default: only plain objects are records", () => {
  expect([isRecord({}), isRecord({ a: 1 }), isRecord(new Error("x"))]).toEqual([true, true, true]);
  expect([isRecord([]), isRecord(null), isRecord(undefined), isRecord("x"), isRecord(1)]).toEqual([
    false,
    false,
    false,
    false,
    false,
  ]);
});
