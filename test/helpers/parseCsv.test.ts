import { describe, expect, test } from "vitest";
import { parseCsv } from "./parseCsv.ts";

describe("parseCsv (strict RFC 4180)", () => {
  test("default: header, quoted fields, doubled quotes, embedded line breaks", () => {
    expect(parseCsv('a,b,c\r\n1,"x,""y""","line\r\nbreak"\r\n,,\r\n')).toEqual({
      header: ["a", "b", "c"],
      rows: [
        { a: "1", b: 'x,"y"', c: "line\r\nbreak" },
        { a: "", b: "", c: "" },
      ],
    });
  });

  test("error: bare LF, missing final CRLF, stray quote, uneven records", () => {
    expect(() => parseCsv("a,b\n1,2\n")).toThrow(/CRLF/);
    expect(() => parseCsv("a,b\r\n1,2")).toThrow(/CRLF/);
    expect(() => parseCsv('a\r\nx"y\r\n')).toThrow(/double quote/);
    expect(() => parseCsv("a,b\r\n1\r\n")).toThrow(/fields/);
  });
});
