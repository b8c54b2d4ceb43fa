import { describe, expect, test } from "vitest";
import { csvRow } from "./csvRow.ts";

describe("csvRow", () => {
  test("default: fields joined by commas, CRLF at the end", () => {
    expect(csvRow(["0xab", 12, 10n ** 30n, true, false, null, 1.5])).toBe(
      "0xab,12,1000000000000000000000000000000,true,false,,1.5\r\n",
    );
  });

  test("behavior: a field with a comma, a quote or a line break is quoted, quotes doubled", () => {
    expect(csvRow(['say "hi"', "a,b", "line\nbreak", "cr\rhere", "plain"])).toBe(
      '"say ""hi""","a,b","line\nbreak","cr\rhere",plain\r\n',
    );
  });

  test("edge: an empty string and null are both an empty field", () => {
    expect(csvRow(["", null, ""])).toBe(",,\r\n");
  });
});
