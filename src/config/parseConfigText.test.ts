import { expect, test } from "vitest";
import { issuesOf } from "./_test/issuesOf.ts";
import { parseConfigText } from "./parseConfigText.ts";

test("default: YAML", () => {
  expect(parseConfigText("chain:\n  id: 1\n  name: x\nrpc:\n  urls: [a, b]\n", "/c/p.yaml")).toEqual({
    chain: { id: 1, name: "x" },
    rpc: { urls: ["a", "b"] },
  });
});

test("args: .yml and upper-case extension", () => {
  expect(parseConfigText("a: 1", "p.yml")).toEqual({ a: 1 });
  expect(parseConfigText("a: 1", "P.YAML")).toEqual({ a: 1 });
});

test("args: JSON", () => {
  expect(parseConfigText('{"chain":{"id":1}}', "p.json")).toEqual({ chain: { id: 1 } });
});

test("behavior: unquoted hex stays a string in YAML", () => {
  const text = "address: 0xAbCdEf0123456789abcdef0123456789ABCDEF01\nn: 0x10\nd: 12\nf: 1.5\nb: true\n";
  expect(parseConfigText(text, "p.yaml")).toEqual({
    address: "0xAbCdEf0123456789abcdef0123456789ABCDEF01",
    n: "0x10",
    d: 12,
    f: 1.5,
    b: true,
  });
});

test("behavior: YAML 1.2 core schema (no yes/no booleans)", () => {
  expect(parseConfigText("a: yes\nb: off\n", "p.yaml")).toEqual({ a: "yes", b: "off" });
});

test("error: unknown extension", () => {
  expect(issuesOf(() => parseConfigText("a = 1", "/x/p.toml"))).toEqual([
    'p.toml: unknown config format ".toml" (use .yaml, .yml or .json)',
  ]);
});

test("error: YAML duplicate key names the line", () => {
  expect(issuesOf(() => parseConfigText("chain:\n  id: 1\n  id: 2\n", "/x/p.yaml"))).toEqual([
    "p.yaml: invalid YAML: Map keys must be unique at line 3, column 3",
  ]);
});

test("error: YAML syntax error", () => {
  const [issue] = issuesOf(() => parseConfigText("rpc:\n  urls: [a,\n", "p.yaml"));
  expect(issue).toMatch(/^p\.yaml: invalid YAML: .+ at line \d+, column \d+$/);
});

test("error: JSON syntax error", () => {
  const [issue] = issuesOf(() => parseConfigText('{"chain": ', "p.json"));
  expect(issue).toMatch(/^p\.json: invalid JSON: /);
});

test("error: empty file", () => {
  expect(issuesOf(() => parseConfigText("# only a comment\n", "p.yaml"))).toEqual([
    "p.yaml: the config file is empty",
  ]);
  expect(issuesOf(() => parseConfigText("null", "p.json"))).toEqual(["p.json: the config file is empty"]);
});
