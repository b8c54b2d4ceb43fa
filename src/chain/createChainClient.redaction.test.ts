import { inspect } from "node:util";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type RpcFault, type RpcProxy, startRpcProxy } from "../../test/helpers/rpcProxy.ts";
import { type Anvil, findFreePort, startAnvil } from "../demo/anvil.ts";
import { createLogger } from "../internal/logger.ts";
import { secretsOfUrl } from "../internal/redact.ts";
import { ALCHEMY_RATE_BODY } from "./_test/providerMessages.ts";
import { testCommon, testConfig } from "./_test/testCommon.ts";
import { classifyRpcError } from "./classifyRpcError.ts";
import { createChainClient } from "./createChainClient.ts";

// Credentials in RPC URLs must not reach any log line or error, even with a logger that knows no secrets:
// errors are redacted where they are built.

const PASSWORD = "s3cretpass";
const KEY = "abcdefghijklmnopqrstuvwxyz012345";
// The Authorization header the credentials travel in: a provider's error page may quote it.
const BASIC = Buffer.from(`user:${PASSWORD}`).toString("base64");
const FORBIDDEN = [PASSWORD, KEY, `user:${PASSWORD}`, BASIC];

let anvil: Anvil;
let proxy: RpcProxy;
let secretUrl: string;
let refusedUrl: string;

beforeAll(async () => {
  anvil = await startAnvil();
  proxy = await startRpcProxy({ upstream: anvil.url });
  const port = new URL(proxy.url).port;
  secretUrl = `http://user:${PASSWORD}@127.0.0.1:${port}/v2/${KEY}`;
  refusedUrl = `http://user:${PASSWORD}@127.0.0.1:${await findFreePort()}/v2/${KEY}`;
});
afterAll(async () => {
  await proxy?.close();
  await anvil?.stop();
});
beforeEach(() => {
  proxy.clearFaults();
  proxy.resetCounts();
});

/** Everything an error could leak through: message, stack, details, cause chain, own properties. */
function dump(error: unknown): string {
  const parts: string[] = [inspect(error, { depth: 10, showHidden: true }), String(error)];
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current instanceof Error; depth++) {
    parts.push(current.message, current.stack ?? "");
    current = current.cause;
  }
  return parts.join("\n");
}

const faults = (): RpcFault[] => [
  { kind: "http", status: 500, body: `upstream ${secretUrl} failed (Authorization: Basic ${BASIC})` },
  { kind: "http", status: 429, body: ALCHEMY_RATE_BODY },
  { kind: "http", status: 401, body: "Must be authenticated!" },
  { kind: "rpcError", code: -32601, message: "the method eth_blockNumber does not exist/is not available" },
  { kind: "malformed" },
  { kind: "drop" },
  { kind: "timeout" },
];

async function exercise(
  secrets: readonly string[] | undefined,
): Promise<{ lines: string[]; errors: string[] }> {
  const lines: string[] = [];
  const logger = createLogger({
    level: "debug",
    destination: { write: (line: string) => lines.push(line) },
    ...(secrets ? { secrets } : {}),
  });
  const errors: string[] = [];
  const urls = [refusedUrl, secretUrl];
  const chain = createChainClient(testCommon(testConfig({ urls, timeoutMs: 1_500 }), logger), {
    maxRetries: 1,
    baseDelayMs: 5,
    maxDelayMs: 10,
    cooldownMs: 50,
  });
  try {
    // Failover from the refused URL (logs a warning naming it) to the proxy.
    expect(await chain.getChainId()).toBe(31337);
    expect(proxy.lastAuthorization).toBe(`Basic ${BASIC}`);
    for (const fault of faults()) {
      proxy.clearFaults();
      proxy.inject(fault);
      await new Promise((resolve) => setTimeout(resolve, 60)); // let cooldowns expire so both URLs fail
      for (const attempt of [
        () => chain.request("eth_blockNumber", []),
        () => chain.client.getBlockNumber(),
      ]) {
        const error = await attempt().then(
          () => new Error("expected a failure"),
          (e: unknown) => e,
        );
        errors.push(dump(error), dump(classifyRpcError(error)));
        logger.error({ err: error }, "call failed"); // a careless caller logging the raw error
      }
    }
    proxy.clearFaults();
    const mismatch = await chain.assertChainId(1).catch((e: unknown) => e);
    errors.push(dump(mismatch));
    expect((mismatch as Error).message).toBe(
      `chain.id is 1 but the RPC at http://***@127.0.0.1:${new URL(proxy.url).port}/v2/*** reports 31337`,
    );
  } finally {
    chain.close();
  }
  return { lines, errors };
}

describe("credentials in RPC URLs", () => {
  test("default: no log line or error contains them, with a logger that knows no secrets", async () => {
    const { lines, errors } = await exercise(undefined);
    expect(lines.some((line) => line.includes("RPC URL failing, using the next one"))).toBe(true);
    expect(lines.some((line) => line.includes("http://***@127.0.0.1"))).toBe(true);
    expect(errors.length).toBe(faults().length * 4 + 1);
    expect(errors.join("\n")).toContain("upstream http://***@127.0.0.1"); // the 500 body quoting the URL
    for (const text of [...lines, ...errors]) {
      for (const secret of FORBIDDEN) expect(text).not.toContain(secret);
    }
  });

  test("args: with the logger's secrets list too", async () => {
    const { lines, errors } = await exercise(secretsOfUrl(secretUrl));
    expect(lines.length).toBeGreaterThan(faults().length);
    for (const text of [...lines, ...errors]) {
      for (const secret of FORBIDDEN) expect(text).not.toContain(secret);
    }
  });
});
