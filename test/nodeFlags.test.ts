import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NODE_FLAGS, START_ENV } from "../scripts/nodeFlags.js";

describe("NODE_FLAGS", () => {
  it("start, demo, migrate and bench:api scripts give Node the options and environment protoscan is started with", () => {
    const { scripts } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      scripts: Record<string, string>;
    };
    for (const command of ["start", "demo", "migrate"]) {
      expect(scripts[command]).toBe(
        `${START_ENV.join(" ")} exec node ${NODE_FLAGS.join(" ")} bin/protoscan.js ${command}`,
      );
    }
    // bench:api serves the API from its own process: it runs as protoscan would.
    expect(scripts["bench:api"]).toBe(
      `${START_ENV.join(" ")} exec node ${NODE_FLAGS.join(" ")} --import tsx bench/api.ts`,
    );
  });
});
