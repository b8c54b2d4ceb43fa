import { expect, test } from "vitest";
import { redactSecrets } from "../internal/redact.ts";
import { configSecrets } from "./configSecrets.ts";
import { resolveConfig } from "./resolveConfig.ts";
import type { ConfigFile } from "./schema.ts";

function config(extra: Record<string, unknown>) {
  return resolveConfig({ chain: { id: 1 }, ...extra } as unknown as ConfigFile, null);
}

test("default: a config without secrets still lists its RPC URL", () => {
  expect(configSecrets(config({}))).toEqual(["http://127.0.0.1:8545"]);
});

test("behavior: every kind of secret", () => {
  const secrets = configSecrets(
    config({
      rpc: {
        urls: [
          "https://eth-mainnet.g.alchemy.com/v2/abcdefghijklmnop1234",
          "https://user:p%40ss@rpc.example/",
        ],
      },
      api: { trackTxApiKeys: ["track-key-1"] },
      webhooks: {
        alchemy: { signingKeys: ["whsec_alchemy"] },
        quicknode: { securityTokens: ["qn_token_1"] },
      },
      prices: {
        api: {
          kind: "alchemy",
          apiKey: "alchemy-api-key",
          network: "eth-mainnet",
          baseUrl: "https://api.g.alchemy.com",
        },
      },
    }),
  );
  expect(new Set(secrets)).toEqual(
    new Set([
      "https://eth-mainnet.g.alchemy.com/v2/abcdefghijklmnop1234",
      "abcdefghijklmnop1234",
      "https://user:p%40ss@rpc.example/",
      "p%40ss",
      "p@ss",
      "user",
      Buffer.from("user:p@ss").toString("base64"), // the Authorization: Basic value it is sent as
      "track-key-1",
      "whsec_alchemy",
      "qn_token_1",
      "alchemy-api-key",
    ]),
  );
  // Longest first, so a whole URL is masked before its parts.
  expect(secrets).toEqual([...secrets].sort((a, b) => b.length - a.length));
  // The public base URL of the price API is not a secret.
  expect(secrets).not.toContain("https://api.g.alchemy.com");
});

test("behavior: credentials inside the price API base URL are secrets", () => {
  const secrets = configSecrets(
    config({ prices: { api: { kind: "defillama", baseUrl: "https://x.example/?apikey=llama-key" } } }),
  );
  expect(secrets).toContain("llama-key");
  expect(secrets).not.toContain("https://x.example/?apikey=llama-key");
});

test("behavior: feeds redactSecrets", () => {
  const c = config({
    rpc: { urls: ["https://eth.example/v2/abcdefghijklmnop1234"] },
    api: { trackTxApiKeys: ["track-key-1"] },
  });
  const line =
    "fetch https://eth.example/v2/abcdefghijklmnop1234 failed; key abcdefghijklmnop1234 and track-key-1";
  expect(redactSecrets(line, configSecrets(c))).toBe("fetch *** failed; key *** and ***");
});

test("behavior: no duplicates, nothing shorter than 4 characters", () => {
  const secrets = configSecrets(config({ api: { trackTxApiKeys: ["abc", "same-key", "same-key"] } }));
  expect(secrets).toEqual(["http://127.0.0.1:8545", "same-key"]);
});
