import { expect, test } from "vitest";
import { applyEnvOverrides } from "./applyEnvOverrides.ts";

const file = { chain: { id: 1 }, rpc: { urls: ["http://a:8545"], batchSize: 10 } };

test("default", () => {
  expect(applyEnvOverrides(file, { RPC_URL: "http://b:8545" })).toEqual({
    chain: { id: 1 },
    rpc: { urls: ["http://b:8545"], batchSize: 10 },
  });
});

test("args: several comma-separated URLs", () => {
  const out = applyEnvOverrides(file, {
    RPC_URL: " http://b:8545, https://c.example/v2/key ,,wss://d.example ",
  });
  expect(out.rpc.urls).toEqual(["http://b:8545", "https://c.example/v2/key", "wss://d.example"]);
});

test("args: RPC_URL unset or blank changes nothing", () => {
  expect(applyEnvOverrides(file, {})).toBe(file);
  expect(applyEnvOverrides(file, { RPC_URL: " , " })).toBe(file);
});

test("behavior: adds rpc when the file has none", () => {
  expect(applyEnvOverrides({ chain: { id: 1 } }, { RPC_URL: "http://b:8545" })).toEqual({
    chain: { id: 1 },
    rpc: { urls: ["http://b:8545"] },
  });
});

test("behavior: the input is not mutated", () => {
  applyEnvOverrides(file, { RPC_URL: "http://b:8545" });
  expect(file.rpc.urls).toEqual(["http://a:8545"]);
});

test("behavior: a value that is not an object is returned as is", () => {
  expect(applyEnvOverrides(null, { RPC_URL: "http://b:8545" })).toBe(null);
});
