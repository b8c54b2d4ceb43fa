import { describe, expect, test } from "vitest";
import { createTerminalOutput } from "./createTerminalOutput.ts";

function recorder(columns = 80) {
  const chunks: string[] = [];
  return { chunks, out: { columns, write: (text: string) => chunks.push(text) } };
}

describe("createTerminalOutput", () => {
  test("default: without a status line, text passes through", () => {
    const { chunks, out } = recorder();
    createTerminalOutput(out).write("a line\n");
    expect(chunks).toEqual(["a line\n"]);
  });

  test("behavior: a log line erases the status line and draws it again below", () => {
    const { chunks, out } = recorder();
    const terminal = createTerminalOutput(out);
    terminal.status("backfill 1");
    terminal.write("a line\n");
    terminal.status("backfill 1");
    terminal.status("backfill 2");
    terminal.status(null);
    terminal.write("b\n");
    expect(chunks).toEqual([
      "\r\x1b[2Kbackfill 1",
      "\r\x1b[2Ka line\nbackfill 1",
      "\r\x1b[2Kbackfill 2",
      "\r\x1b[2K",
      "b\n",
    ]);
  });

  test("behavior: the status line is cut to the terminal's width", () => {
    const { chunks, out } = recorder(10);
    createTerminalOutput(out).status("0123456789abc");
    expect(chunks).toEqual(["\r\x1b[2K01234567…"]);
  });
});
