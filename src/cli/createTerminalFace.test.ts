import { describe, expect, test } from "vitest";
import { createTerminalFace } from "./createTerminalFace.ts";

function fakeStdout(isTTY: boolean) {
  const chunks: string[] = [];
  const stdout = { isTTY, columns: 120, write: (text: string) => chunks.push(text) };
  return { chunks, stdout: stdout as unknown as NodeJS.WriteStream };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are what is being removed
const ANSI = /\x1b\[[0-9;]*m/g;

describe("createTerminalFace", () => {
  test("default: on a terminal, readable lines with the secrets scrubbed, and a terminal for the status line", async () => {
    const { chunks, stdout } = fakeStdout(true);
    const face = await createTerminalFace(undefined, stdout);
    expect(face.format).toBe("pretty");
    expect(face.terminal).not.toBeNull();
    face
      .logger({ level: "info", secrets: ["s3cr3t"] })
      .info({ url: "http://x/s3cr3t" }, "protoscan is listening");
    const text = chunks.join("").replace(ANSI, "");
    expect(text).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: protoscan is listening\n {4}url: "http:\/\/x\/\*\*\*"\n$/,
    );
    face.terminal?.status("backfill");
    face.logger({ level: "info" }).info("next");
    const last = chunks.at(-1)?.replace(ANSI, "") ?? "";
    // the status line is erased, the log line written, the status line drawn again below it
    expect(last.startsWith("\r\x1b[2K[")).toBe(true);
    expect(last).toMatch(/\] INFO: next\nbackfill$/);
  });

  test("behavior: not a terminal, pino's JSON lines as they are", async () => {
    const { chunks, stdout } = fakeStdout(false);
    const face = await createTerminalFace(undefined, stdout);
    expect(face.format).toBe("json");
    expect(face.terminal).toBeNull();
    face.logger({ level: "info" }).info({ url: "http://x" }, "protoscan is listening");
    expect(JSON.parse(chunks.join(""))).toMatchObject({
      level: 30,
      service: "protoscan",
      url: "http://x",
      msg: "protoscan is listening",
    });
  });

  test("behavior: LOG_FORMAT=pretty without a terminal has no colours and no status line", async () => {
    const { chunks, stdout } = fakeStdout(false);
    const face = await createTerminalFace("pretty", stdout);
    expect(face.format).toBe("pretty");
    expect(face.terminal).toBeNull();
    face.logger({ level: "info" }).info("protoscan is listening");
    expect(chunks.join("")).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: protoscan is listening\n$/);
  });
});
