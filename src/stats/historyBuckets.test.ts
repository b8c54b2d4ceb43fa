import { describe, expect, test } from "vitest";
import { bucketCount, bucketStart, bucketStarts } from "./historyBuckets.ts";

describe("historyBuckets", () => {
  test("default: UTC hour and day starts", () => {
    const t = new Date("2026-11-20T13:45:12.345Z");
    expect(bucketStart(t, "hour").toISOString()).toBe("2026-11-20T13:00:00.000Z");
    expect(bucketStart(t, "day").toISOString()).toBe("2026-11-20T00:00:00.000Z");
  });

  test("behavior: from the bucket holding from to the one holding to, both included", () => {
    const starts = bucketStarts(new Date("2026-11-20T22:30:00Z"), new Date("2026-11-21T01:00:00Z"), "hour");
    expect(starts.map((d) => d.toISOString())).toEqual([
      "2026-11-20T22:00:00.000Z",
      "2026-11-20T23:00:00.000Z",
      "2026-11-21T00:00:00.000Z",
      "2026-11-21T01:00:00.000Z",
    ]);
    expect(bucketCount(new Date("2026-11-20T22:30:00Z"), new Date("2026-11-21T01:00:00Z"), "hour")).toBe(4);
  });

  test("edge: from and to in one bucket, and before 1970", () => {
    const t = new Date("2026-11-20T10:10:00Z");
    expect(bucketStarts(t, t, "day")).toHaveLength(1);
    expect(bucketStart(new Date("1969-12-31T23:30:00Z"), "hour").toISOString()).toBe(
      "1969-12-31T23:00:00.000Z",
    );
  });
});
