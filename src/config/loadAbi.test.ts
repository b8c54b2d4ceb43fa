import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";
import { issuesOf } from "./_test/issuesOf.ts";
import { loadAbi } from "./loadAbi.ts";

const transfer = { type: "event", name: "Transfer", inputs: [], anonymous: false };
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "protoscan-abi-"));
  mkdirSync(join(dir, "abis"));
  writeFileSync(join(dir, "abis", "bare.json"), JSON.stringify([transfer]));
  writeFileSync(
    join(dir, "abis", "artifact.json"),
    JSON.stringify({ contractName: "X", abi: [transfer], bytecode: "0x" }),
  );
  writeFileSync(join(dir, "abis", "object.json"), JSON.stringify({ contractName: "X" }));
  writeFileSync(join(dir, "abis", "numbers.json"), JSON.stringify([1, 2]));
  writeFileSync(join(dir, "abis", "broken.json"), "[{");
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

test("default: bare ABI array relative to the base directory", () => {
  expect(loadAbi("./abis/bare.json", dir)).toEqual([transfer]);
});

test("args: artifact object with an abi key", () => {
  expect(loadAbi("abis/artifact.json", dir)).toEqual([transfer]);
});

test("args: absolute path ignores the base directory", () => {
  expect(loadAbi(join(dir, "abis", "bare.json"), "/nonexistent")).toEqual([transfer]);
});

test("args: Uniswap npm build artifact", () => {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const abi = loadAbi("node_modules/@uniswap/v2-core/build/UniswapV2Pair.json", root);
  expect(abi.filter((entry) => entry.type === "event").map((entry) => entry.name)).toEqual([
    "Approval",
    "Burn",
    "Mint",
    "Swap",
    "Sync",
    "Transfer",
  ]);
});

test("args: inline array", () => {
  expect(loadAbi([transfer], null)).toEqual([transfer]);
});

test("behavior: one read per file with a shared cache", () => {
  const cache = new Map();
  const first = loadAbi("./abis/bare.json", dir, cache);
  expect(loadAbi("abis/../abis/bare.json", dir, cache)).toBe(first);
  expect([...cache.keys()]).toEqual([join(dir, "abis", "bare.json")]);
});

test("error: missing file", () => {
  expect(issuesOf(() => loadAbi("./abis/x.json", dir))).toEqual(["cannot read ./abis/x.json (ENOENT)"]);
});

test("error: a directory", () => {
  expect(issuesOf(() => loadAbi("./abis", dir))).toEqual(["cannot read ./abis (EISDIR)"]);
});

test("error: not an ABI array", () => {
  expect(issuesOf(() => loadAbi("./abis/object.json", dir))).toEqual([
    "not an ABI array (./abis/object.json)",
  ]);
  expect(issuesOf(() => loadAbi("./abis/numbers.json", dir))).toEqual([
    "not an ABI array (./abis/numbers.json)",
  ]);
  expect(issuesOf(() => loadAbi([{ type: 5 }], dir))).toEqual(["not an ABI array"]);
});

test("error: invalid JSON", () => {
  const [issue] = issuesOf(() => loadAbi("./abis/broken.json", dir));
  expect(issue).toMatch(/^not valid JSON \(\.\/abis\/broken\.json\): /);
});
