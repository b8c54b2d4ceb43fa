// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config values with ${NAME} references, not templates
import { expect, test } from "vitest";
import { issuesOf } from "./_test/issuesOf.ts";
import { interpolateEnv } from "./interpolateEnv.ts";

test("default", () => {
  const file = { rpc: { urls: ["${RPC_URL}"] }, chain: { id: 1 } };
  expect(interpolateEnv(file, { RPC_URL: "http://127.0.0.1:8545" })).toEqual({
    rpc: { urls: ["http://127.0.0.1:8545"] },
    chain: { id: 1 },
  });
});

test("behavior: several references inside one string", () => {
  const out = interpolateEnv(
    { url: "https://${HOST}:${PORT}/v2/${KEY}" },
    { HOST: "h", PORT: "1", KEY: "k" },
  );
  expect(out).toEqual({ url: "https://h:1/v2/k" });
});

test("behavior: keys, numbers and booleans are left alone", () => {
  const file = { "${KEY}": 5, on: true, off: null };
  expect(interpolateEnv(file, {})).toEqual(file);
});

test("behavior: an empty variable counts as set", () => {
  expect(interpolateEnv({ a: "x${EMPTY}y" }, { EMPTY: "" })).toEqual({ a: "xy" });
});

test("behavior: $${NAME} is a literal", () => {
  expect(interpolateEnv({ a: "$${NAME} and ${NAME}" }, { NAME: "v" })).toEqual({ a: "${NAME} and v" });
});

test("behavior: the input is not mutated", () => {
  const file = { a: ["${X}"] };
  interpolateEnv(file, { X: "1" });
  expect(file).toEqual({ a: ["${X}"] });
});

test("error: unset variable names the variable and the key path", () => {
  const issues = issuesOf(() => interpolateEnv({ rpc: { urls: ["${RPC_URL}"] } }, {}));
  expect(issues).toEqual(["rpc.urls[0]: environment variable RPC_URL is not set"]);
});

test("error: every unset variable is reported", () => {
  const file = {
    webhooks: {
      alchemy: { signingKeys: ["${ALCHEMY_SIGNING_KEY}"] },
      quicknode: { securityTokens: ["${QN}"] },
    },
    prices: { api: { apiKey: "${A}-${B}" } },
  };
  expect(issuesOf(() => interpolateEnv(file, { B: "b" }))).toEqual([
    "webhooks.alchemy.signingKeys[0]: environment variable ALCHEMY_SIGNING_KEY is not set",
    "webhooks.quicknode.securityTokens[0]: environment variable QN is not set",
    "prices.api.apiKey: environment variable A is not set",
  ]);
});

test("error: malformed reference", () => {
  expect(issuesOf(() => interpolateEnv({ a: "${1BAD}" }, {}))).toEqual([
    "a: ${1BAD} is not a valid environment variable reference",
  ]);
});

test("error: the message of a single issue is the issue", () => {
  expect(() => interpolateEnv({ a: "${X}" }, {})).toThrowError("a: environment variable X is not set");
});
