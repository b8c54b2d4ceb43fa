import fc from "fast-check";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

/**
 * Property: whatever module, action and parameters a client sends to `/api` or `/v2/api`, in the query
 * string, a form or a JSON body, the answer is HTTP 200 and Etherscan-shaped: the envelope
 * `{status, message, result}` (`status` 0 with `NOTOK` and a text, or an empty list with Etherscan's message;
 * `status` 1 with `OK`) or, for `proxy`, a JSON-RPC answer with id 1. Never a 5xx (SPEC §11).
 */

const RUNS = 300;

const MODULES: Record<string, string[]> = {
  account: ["txlist", "tokentx", "tokenbalance", "balance", "balancemulti"],
  stats: ["tokensupply"],
  token: ["tokenholderlist", "tokeninfo"],
  contract: ["getabi"],
  logs: ["getLogs"],
  block: ["getblocknobytime"],
  proxy: [
    "eth_blockNumber",
    "eth_getBlockByNumber",
    "eth_getTransactionByHash",
    "eth_getTransactionReceipt",
    "eth_getCode",
    "eth_call",
    "eth_getTransactionCount",
    "eth_gasPrice",
  ],
};

const NAMES = [
  "address",
  "contractaddress",
  "txhash",
  "page",
  "offset",
  "sort",
  "startblock",
  "endblock",
  "fromBlock",
  "toBlock",
  "topic0",
  "topic1",
  "topic2",
  "topic3",
  "topic0_1_opr",
  "topic1_2_opr",
  "topic0_2_opr",
  "tag",
  "boolean",
  "to",
  "from",
  "data",
  "value",
  "timestamp",
  "closest",
  "chainid",
  "chainId",
  "apikey",
  "__proto__",
  "constructor",
];

const NASTY = [
  "",
  "0",
  "-1",
  "1e309",
  "9007199254740993",
  "99999999999999999999",
  "0x",
  "0X0",
  "0xffffffffffffffffffffffff",
  "latest",
  "pending",
  "asc",
  "desc",
  "and",
  "or",
  "true",
  "false",
  "before",
  "after",
  "NaN",
  "__proto__",
  "constructor",
  "toString",
  "' OR 1=1 --",
  "\u0000",
  "😀",
  "a".repeat(300),
];

let chain: DemoChain;
let db: TestDatabase;
let pipeline: TestPipeline;
let app: FastifyInstance;

beforeAll(async () => {
  chain = await setupDemoChain();
  await generateTransactions({
    rpcUrl: chain.anvil.url,
    deployment: chain.deployment,
    count: 8,
    perBlock: 4,
  });
  db = await createTestDatabase();
  pipeline = await createTestPipeline({ config: chain.config, database: db.database });
  await pipeline.catchUp();
  app = await buildApp(pipeline.common, {
    database: db.database,
    chain: pipeline.chain,
    indexerStatus: pipeline.indexer.status,
  });
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await db?.cleanup();
  await chain?.anvil.stop();
});

/** Values that reach deep into the actions (real addresses, hashes, topics, blocks) and values that do not. */
function valueArb(): fc.Arbitrary<string> {
  const d = chain.deployment;
  const real = [
    ...d.users,
    d.tokens.DEMO.address,
    d.tokens.USDC.address,
    ...chain.config.protocols.flatMap((p) => p.contracts.map((c) => c.address)),
    `0x${"ab".repeat(32)}`,
    "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
    "0x18160ddd",
    String(chain.config.chain.id),
    "1",
    "2",
    "10",
    "100",
    "10000",
    String(Math.floor(Date.now() / 1000)),
  ];
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...real) },
    { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
    { weight: 1, arbitrary: fc.constant(d.users.slice(0, 3).join(",")) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 2, arbitrary: fc.stringMatching(/^0x[0-9a-fA-F]{0,70}$/) },
    { weight: 2, arbitrary: fc.nat({ max: 20_000 }).map(String) },
  );
}

function isEtherscanShaped(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  const b = body as Record<string, unknown>;
  if ("jsonrpc" in b) {
    return b.jsonrpc === "2.0" && b.id === 1 && "result" in b !== "error" in b && Object.keys(b).length === 3;
  }
  if (Object.keys(b).sort().join() !== "message,result,status") return false;
  if (b.status === "1") return b.message === "OK";
  if (b.status !== "0") return false;
  if (b.message === "NOTOK") return typeof b.result === "string" && b.result.length > 0;
  return (
    (b.message === "No transactions found" || b.message === "No records found") && Array.isArray(b.result)
  );
}

test("property: any module, action and parameters: HTTP 200, Etherscan-shaped", async () => {
  const moduleArb = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...Object.keys(MODULES)) },
    { weight: 1, arbitrary: fc.constantFrom(...NASTY) },
  );
  const requestArb = moduleArb.chain((module) =>
    fc.record({
      path: fc.constantFrom("/api", `/v2/api`),
      v2ChainId: fc.boolean(),
      module: fc.constant(module),
      action: fc.oneof(
        {
          weight: 6,
          arbitrary: fc.constantFrom(...(Object.hasOwn(MODULES, module) ? MODULES[module]! : ["txlist"])),
        },
        { weight: 1, arbitrary: fc.constantFrom(...NASTY) },
      ),
      params: fc.dictionary(fc.constantFrom(...NAMES), valueArb(), { maxKeys: 6 }),
      as: fc.constantFrom("query", "form", "json"),
    }),
  );
  await fc.assert(
    fc.asyncProperty(requestArb, async (r) => {
      const params: Record<string, string> = { ...r.params, module: r.module, action: r.action };
      if (r.path === "/v2/api" && r.v2ChainId) params.chainid = String(chain.config.chain.id);
      const search = new URLSearchParams(params).toString();
      const response =
        r.as === "query"
          ? await app.inject({ method: "GET", url: `${r.path}?${search}` })
          : await app.inject({
              method: "POST",
              url: r.path,
              headers: {
                "content-type": r.as === "form" ? "application/x-www-form-urlencoded" : "application/json",
              },
              payload: r.as === "form" ? search : JSON.stringify(params),
            });
      const where = `${r.as} ${r.path}?${search}`;
      expect(response.statusCode, where).toBe(200);
      expect(isEtherscanShaped(response.json()), `${where}: ${response.body.slice(0, 300)}`).toBe(true);
      // The answer of an unexpected failure (logged as an error) never comes from input alone.
      expect(response.body, where).not.toContain("Something went wrong");
    }),
    { numRuns: RUNS },
  );
});
