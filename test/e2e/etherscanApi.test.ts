import type { FastifyInstance } from "fastify";
import {
  createPublicClient,
  createWalletClient,
  erc20Abi,
  getAddress,
  type Hex,
  http,
  type PublicClient,
  parseAbiItem,
  toFunctionSelector,
} from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { createChainClient } from "../../src/chain/createChainClient.ts";
import type { Address, Config } from "../../src/config/schema.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { createLocalBroadcaster } from "../../src/ingest/broadcaster.ts";
import { transactions } from "../../src/store/schema.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { startRpcProxy } from "../helpers/rpcProxy.ts";

const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");
const NOBODY = "0x00000000000000000000000000000000000000aa";
const HASH_NONE = `0x${"12".repeat(32)}`;

type Envelope = { status: string; message: string; result: unknown };
type Row = Record<string, string>;

let chain: DemoChain;
let config: Config;
let client: PublicClient;
let db: TestDatabase;
let pipeline: TestPipeline;
let app: FastifyInstance;
let head: number;

beforeAll(async () => {
  chain = await setupDemoChain();
  config = chain.config;
  client = createPublicClient({ transport: http(chain.anvil.url) }) as PublicClient;
  await generateTransactions({
    rpcUrl: chain.anvil.url,
    deployment: chain.deployment,
    count: 40,
    perBlock: 4,
  });
  db = await createTestDatabase();
  pipeline = await createTestPipeline({ config, database: db.database });
  head = await pipeline.catchUp();
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

const startBlock = () => BigInt(config.indexer.startBlock);
const user = () => chain.deployment.users[0]!.toLowerCase() as Address;
const token = (symbol: "DEMO" | "USDC" | "WETH" | "RWD") =>
  chain.deployment.tokens[symbol].address.toLowerCase() as Address;

/** The same question on both paths: V1 `/api` and V2 `/v2/api` with the chain's id. */
const PATHS = [
  { name: "/api", query: (q: string) => `/api?${q}` },
  { name: "/v2/api", query: (q: string) => `/v2/api?chainid=${chain.config.chain.id}&${q}` },
];

describe.each(PATHS)("$name", ({ query }) => {
  const get = async (q: string): Promise<Envelope> => {
    const response = await app.inject({ method: "GET", url: query(q) });
    expect(response.statusCode, q).toBe(200);
    return response.json() as Envelope;
  };
  const rows = async (q: string): Promise<Row[]> => {
    const answer = await get(q);
    expect(answer.status, JSON.stringify(answer)).toBe("1");
    expect(answer.message).toBe("OK");
    return answer.result as Row[];
  };
  const notOk = async (q: string, text: string) =>
    expect(await get(q)).toEqual({ status: "0", message: "NOTOK", result: text });

  test("account txlist: every field equals the node's transaction and receipt", async () => {
    const list = await rows(`module=account&action=txlist&address=${getAddress(user())}`);
    expect(list.length).toBeGreaterThan(3);
    for (const row of list) {
      const hash = row.hash as Hex;
      const [tx, receipt] = await Promise.all([
        client.getTransaction({ hash }),
        client.getTransactionReceipt({ hash }),
      ]);
      const block = await client.getBlock({ blockNumber: tx.blockNumber! });
      expect(row).toEqual({
        blockNumber: String(tx.blockNumber),
        timeStamp: String(block.timestamp),
        hash,
        nonce: String(tx.nonce),
        blockHash: tx.blockHash,
        transactionIndex: String(tx.transactionIndex),
        from: tx.from.toLowerCase(),
        to: tx.to?.toLowerCase() ?? "",
        value: tx.value.toString(),
        gas: tx.gas.toString(),
        gasPrice: receipt.effectiveGasPrice.toString(),
        isError: receipt.status === "success" ? "0" : "1",
        txreceipt_status: receipt.status === "success" ? "1" : "0",
        input: tx.input,
        contractAddress: "",
        cumulativeGasUsed: receipt.cumulativeGasUsed.toString(),
        gasUsed: receipt.gasUsed.toString(),
        confirmations: String(head - Number(tx.blockNumber) + 1),
        methodId: tx.input.length >= 10 ? tx.input.slice(0, 10) : "0x",
        functionName: row.functionName,
      });
      expect(row.from === user() || row.to === user()).toBe(true);
      // The configured ABI names the function with its parameters, as Etherscan does.
      if (row.functionName !== "") {
        expect(toFunctionSelector(`function ${row.functionName}`)).toBe(row.methodId);
        expect(row.functionName).toMatch(/^\w+\(.*\)$/);
      }
    }
    expect(list.some((r) => r.functionName !== "")).toBe(true);
    const order = list.map((r) => [Number(r.blockNumber), Number(r.transactionIndex)] as const);
    expect(order).toEqual([...order].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
  });

  test("account txlist: page, offset, sort and block bounds", async () => {
    const all = await rows(`module=account&action=txlist&address=${user()}`);
    const page2 = await rows(`module=account&action=txlist&address=${user()}&page=2&offset=2`);
    expect(page2).toEqual(all.slice(2, 4));
    const desc = await rows(`module=account&action=txlist&address=${user()}&sort=desc`);
    expect(desc.map((r) => r.hash)).toEqual(all.map((r) => r.hash).reverse());
    const middle = Number(all[Math.floor(all.length / 2)]!.blockNumber);
    const bounded = await rows(
      `module=account&action=txlist&address=${user()}&startblock=${middle}&endblock=${middle}`,
    );
    expect(bounded).toEqual(all.filter((r) => Number(r.blockNumber) === middle));
    expect(await get(`module=account&action=txlist&address=${user()}&page=100&offset=100`)).toEqual({
      status: "0",
      message: "No transactions found",
      result: [],
    });
    await notOk(
      `module=account&action=txlist&address=${user()}&page=101&offset=100`,
      "Result window is too large, PageNo x Offset size must be less than or equal to 10000",
    );
    expect(await get(`module=account&action=txlist&address=${NOBODY}`)).toEqual({
      status: "0",
      message: "No transactions found",
      result: [],
    });
  });

  test("account tokentx: by address and by contract, the chain's Transfer logs", async () => {
    const tokens = config.tokens.map((t) => t.address);
    // The store holds what was indexed: from the configured start block.
    const logs = await client.getLogs({
      address: tokens,
      event: TRANSFER,
      fromBlock: startBlock(),
      toBlock: "latest",
    });
    // …of the stored transactions: all of an exclusive token's, the others' where a protocol was called.
    const stored = new Set(
      (await db.database.db.select({ hash: transactions.hash }).from(transactions)).map((r) => r.hash),
    );
    const exclusive = new Set(
      config.tokens.filter((t) => t.exclusive ?? t.official).map((t) => t.address.toLowerCase()),
    );
    expect(
      logs.filter((l) => exclusive.has(l.address.toLowerCase())).every((l) => stored.has(l.transactionHash)),
    ).toBe(true);
    const mine = logs.filter(
      (l) =>
        stored.has(l.transactionHash) &&
        (l.args.from!.toLowerCase() === user() || l.args.to!.toLowerCase() === user()),
    );
    const list = await rows(`module=account&action=tokentx&address=${user()}`);
    expect(list.map((r) => [r.hash, r.logIndex, r.from, r.to, r.value, r.contractAddress])).toEqual(
      mine.map((l) => [
        l.transactionHash,
        String(l.logIndex),
        l.args.from!.toLowerCase(),
        l.args.to!.toLowerCase(),
        l.args.value!.toString(),
        l.address.toLowerCase(),
      ]),
    );
    const first = list[0]!;
    const tx = await client.getTransaction({ hash: first.hash as Hex });
    const receipt = await client.getTransactionReceipt({ hash: first.hash as Hex });
    const config0 = config.tokens.find((t) => t.address.toLowerCase() === first.contractAddress)!;
    expect(first).toMatchObject({
      nonce: String(tx.nonce),
      blockHash: tx.blockHash,
      tokenName: config0.name,
      tokenSymbol: config0.symbol,
      tokenDecimal: String(config0.decimals),
      gas: tx.gas.toString(),
      gasPrice: receipt.effectiveGasPrice.toString(),
      gasUsed: receipt.gasUsed.toString(),
      cumulativeGasUsed: receipt.cumulativeGasUsed.toString(),
      input: tx.input,
      confirmations: String(head - Number(tx.blockNumber) + 1),
    });
    const demo = token("DEMO");
    const byToken = await rows(`module=account&action=tokentx&contractaddress=${demo}&sort=desc&offset=5`);
    const demoLogs = logs
      .filter((l) => l.address.toLowerCase() === demo)
      .reverse()
      .slice(0, 5);
    expect(byToken.map((r) => [r.hash, r.logIndex])).toEqual(
      demoLogs.map((l) => [l.transactionHash, String(l.logIndex)]),
    );
    const both = await rows(`module=account&action=tokentx&address=${user()}&contractaddress=${demo}`);
    expect(both.map((r) => r.hash)).toEqual(
      mine.filter((l) => l.address.toLowerCase() === demo).map((l) => l.transactionHash),
    );
  });

  test("account tokenbalance, stats tokensupply, token tokenholderlist and tokeninfo equal the contract", async () => {
    const demo = token("DEMO");
    const balance = await client.readContract({
      address: demo,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [user()],
    });
    expect(await get(`module=account&action=tokenbalance&contractaddress=${demo}&address=${user()}`)).toEqual(
      {
        status: "1",
        message: "OK",
        result: balance.toString(),
      },
    );
    const supply = await client.readContract({ address: demo, abi: erc20Abi, functionName: "totalSupply" });
    expect((await get(`module=stats&action=tokensupply&contractaddress=${demo}`)).result).toBe(
      supply.toString(),
    );
    const holders = await rows(`module=token&action=tokenholderlist&contractaddress=${demo}`);
    expect(holders.length).toBeGreaterThan(3);
    for (const h of holders) {
      const onChain = await client.readContract({
        address: demo,
        abi: erc20Abi,
        functionName: "balanceOf",
        args: [h.TokenHolderAddress as Address],
      });
      expect(h.TokenHolderQuantity).toBe(onChain.toString());
    }
    const quantities = holders.map((h) => BigInt(h.TokenHolderQuantity!));
    expect(quantities).toEqual([...quantities].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0)));
    expect(await rows(`module=token&action=tokenholderlist&contractaddress=${demo}&page=2&offset=2`)).toEqual(
      holders.slice(2, 4),
    );
    const info = (await rows(`module=token&action=tokeninfo&contractaddress=${demo}`))[0]!;
    const demoConfig = config.tokens.find((t) => t.address.toLowerCase() === demo)!;
    expect(info).toMatchObject({
      contractAddress: demo,
      tokenName: demoConfig.name,
      symbol: demoConfig.symbol,
      divisor: String(demoConfig.decimals),
      tokenType: "ERC20",
      totalSupply: supply.toString(),
    });
    await notOk(
      `module=token&action=tokeninfo&contractaddress=${NOBODY}`,
      "Error! Token is not tracked by this protoscan",
    );
  });

  test("contract getabi: the configured ABI; other addresses are not verified", async () => {
    const contract = config.protocols[0]!.contracts[0]!;
    const answer = await get(`module=contract&action=getabi&address=${contract.address}`);
    expect(answer.status).toBe("1");
    expect(JSON.parse(answer.result as string)).toEqual(contract.abi);
    await notOk(`module=contract&action=getabi&address=${NOBODY}`, "Contract source code not verified");
  });

  test("logs getLogs: the chain's logs by address, topics and operator", async () => {
    const demo = token("DEMO");
    // Every log DEMO emitted since the start block is in a stored transaction (a tracked token's logs).
    const expected = await client.getLogs({ address: demo, fromBlock: startBlock(), toBlock: "latest" });
    const list = await rows(`module=logs&action=getLogs&address=${demo}&fromBlock=0&toBlock=latest`);
    expect(list.map((l) => [l.transactionHash, l.logIndex])).toEqual(
      expected.map((l) => [l.transactionHash, `0x${l.logIndex.toString(16)}`]),
    );
    const first = list[0]!;
    const log = expected[0]!;
    const block = await client.getBlock({ blockNumber: log.blockNumber });
    const receipt = await client.getTransactionReceipt({ hash: log.transactionHash });
    expect(first).toEqual({
      address: demo,
      topics: log.topics,
      data: log.data,
      blockNumber: `0x${log.blockNumber.toString(16)}`,
      blockHash: log.blockHash,
      timeStamp: `0x${block.timestamp.toString(16)}`,
      gasPrice: `0x${receipt.effectiveGasPrice.toString(16)}`,
      gasUsed: `0x${receipt.gasUsed.toString(16)}`,
      logIndex: `0x${log.logIndex.toString(16)}`,
      transactionHash: log.transactionHash,
      transactionIndex: `0x${log.transactionIndex.toString(16)}`,
    });
    const topic2 = expected.find((l) => l.topics[0] === log.topics[0] && l.topics.length === 3)!.topics[2]!;
    const toUser = await rows(
      `module=logs&action=getLogs&address=${demo}&topic0=${log.topics[0]}&topic2=${topic2}`,
    );
    expect(toUser.length).toBeGreaterThan(0);
    expect(toUser.every((l) => (l.topics as unknown as string[])[2] === topic2)).toBe(true);
    const topic1 = expected[expected.length - 1]!.topics[1]!;
    const either = await rows(
      `module=logs&action=getLogs&address=${demo}&topic1=${topic1}&topic2=${topic2}&topic1_2_opr=or`,
    );
    expect(either.length).toBe(
      list.filter((l) => {
        const t = l.topics as unknown as string[];
        return t[1] === topic1 || t[2] === topic2;
      }).length,
    );
    expect(await rows(`module=logs&action=getLogs&address=${demo}&page=2&offset=3`)).toEqual(
      list.slice(3, 6),
    );
    expect(await get(`module=logs&action=getLogs&address=${NOBODY}`)).toEqual({
      status: "0",
      message: "No records found",
      result: [],
    });
  });

  test("account balance, balancemulti and block getblocknobytime: the node's answers", async () => {
    const users = chain.deployment.users.map((u) => u.toLowerCase());
    const balances = await Promise.all(users.map((u) => client.getBalance({ address: u as Address })));
    expect((await get(`module=account&action=balance&address=${users[0]}&tag=latest`)).result).toBe(
      balances[0]!.toString(),
    );
    expect(await rows(`module=account&action=balancemulti&address=${users.join(",")}`)).toEqual(
      users.map((account, i) => ({ account, balance: balances[i]!.toString() })),
    );
    await notOk(
      `module=account&action=balancemulti&address=${Array(21).fill(users[0]).join(",")}`,
      "Error! Maximum of 20 addresses per request",
    );
    const latest = await client.getBlock();
    // A block past the node's head is the input's fault: the node's refusal is the answer, not a failure.
    const future = `0x${(latest.number + 1000n).toString(16)}`;
    for (const action of ["balance", "balancemulti"]) {
      const body = await get(`module=account&action=${action}&address=${users[0]}&tag=${future}`);
      expect(body.status).toBe("0");
      expect(body.message).toBe("NOTOK");
      expect(String(body.result)).toMatch(/^Error! .*block/i);
      expect(String(body.result)).not.toContain("Something went wrong");
    }
    const at = await client.getBlock({ blockNumber: latest.number - 3n });
    expect(
      (await get(`module=block&action=getblocknobytime&timestamp=${at.timestamp}&closest=before`)).result,
    ).toBe(String(await lastBlockAtOrBefore(at.timestamp)));
    expect(
      (await get(`module=block&action=getblocknobytime&timestamp=${at.timestamp}&closest=after`)).result,
    ).toBe(String(await firstBlockAtOrAfter(at.timestamp)));
    await notOk(
      `module=block&action=getblocknobytime&timestamp=${latest.timestamp + 1000n}&closest=after`,
      "Error! No closest block found",
    );
  });

  test("proxy: JSON-RPC answers equal the node's", async () => {
    const hash = (await rows(`module=account&action=txlist&address=${user()}`))[0]!.hash as Hex;
    const rpc = (method: string, params: unknown[]) =>
      (client.request as (args: { method: string; params: unknown[] }) => Promise<unknown>)({
        method,
        params,
      });
    const cases: [string, string, unknown[]][] = [
      ["eth_blockNumber", "", []],
      ["eth_getBlockByNumber", `tag=0x${head.toString(16)}&boolean=true`, [`0x${head.toString(16)}`, true]],
      ["eth_getTransactionByHash", `txhash=${hash}`, [hash]],
      ["eth_getTransactionReceipt", `txhash=${hash}`, [hash]],
      ["eth_getCode", `address=${token("DEMO")}&tag=latest`, [token("DEMO"), "latest"]],
      ["eth_getTransactionCount", `address=${user()}&tag=latest`, [user(), "latest"]],
      ["eth_gasPrice", "", []],
      [
        "eth_call",
        `to=${token("DEMO")}&data=0x18160ddd&tag=latest`,
        [{ to: token("DEMO"), data: "0x18160ddd" }, "latest"],
      ],
    ];
    for (const [method, params, rpcParams] of cases) {
      const answer = await get(`module=proxy&action=${method}&${params}`);
      expect(answer, method).toEqual({ jsonrpc: "2.0", id: 1, result: await rpc(method, rpcParams) });
    }
    expect(await get(`module=proxy&action=eth_getTransactionByHash&txhash=${HASH_NONE}`)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: null,
    });
    // A revert is the node's JSON-RPC error: transfer more than the sender holds.
    const call = await get(
      `module=proxy&action=eth_call&to=${token("DEMO")}&from=${NOBODY}&data=0xa9059cbb${user().slice(2).padStart(64, "0")}${"f".repeat(64)}`,
    );
    expect(call).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      error: { code: expect.any(Number), message: expect.stringMatching(/revert/i) },
    });
  });

  test("errors: Etherscan's texts with HTTP 200", async () => {
    await notOk("action=txlist", "Error! Missing Or invalid Module name");
    await notOk("module=nope&action=txlist", "Error! Missing Or invalid Module name");
    await notOk("module=account", "Error! Missing Or invalid Action name");
    await notOk("module=account&action=nope", "Error! Missing Or invalid Action name");
    await notOk("module=account&action=toString", "Error! Missing Or invalid Action name");
    await notOk("module=account&action=txlist&address=0x123", "Error! Invalid address format");
    await notOk("module=account&action=txlist", "Error! Invalid address format");
    await notOk("module=account&action=balance&address=nope", "Error! Invalid address format");
    await notOk("module=proxy&action=eth_getTransactionReceipt&txhash=0x12", "Error! Invalid txhash format");
    await notOk("module=proxy&action=eth_getTransactionByHash", "Error! Invalid txhash format");
    await notOk(
      "module=logs&action=getLogs&page=11&offset=1000",
      "Result window is too large, PageNo x Offset size must be less than or equal to 10000",
    );
  });

  test("request: parameters in a form or JSON POST body", async () => {
    const url = query("").replace(/[?&]$/, "");
    const expected = await get(`module=account&action=balance&address=${user()}`);
    const form = await app.inject({
      method: "POST",
      url,
      headers: { "content-type": "application/x-www-form-urlencoded; charset=UTF-8" },
      payload: `module=account&action=balance&address=${user()}`,
    });
    expect(form.statusCode).toBe(200);
    expect(form.json()).toEqual(expected);
    const json = await app.inject({
      method: "POST",
      url,
      payload: { module: "account", action: "balance", address: user() },
    });
    expect(json.statusCode).toBe(200);
    expect(json.json()).toEqual(expected);
    // A body over 1 MiB never reaches the API: the 413 problem of every route.
    const large = await app.inject({
      method: "POST",
      url,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: `module=account&action=balance&x=${"a".repeat(1024 * 1024)}`,
    });
    expect(large.statusCode).toBe(413);
    expect(large.json()).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    const text = await app.inject({
      method: "POST",
      url,
      headers: { "content-type": "text/plain" },
      payload: "x",
    });
    expect(text.statusCode).toBe(200);
    expect(text.json()).toMatchObject({ status: "0", message: "NOTOK" });
  });
});

describe("v2 and keys", () => {
  test("v2: chainid missing or different is NOTOK; chainId is accepted", async () => {
    const text =
      "Missing or unsupported chainid parameter (required for v2 api), please see chainlist for the list of supported chainids";
    for (const url of [
      "/v2/api?module=proxy&action=eth_blockNumber",
      "/v2/api?chainid=1&module=proxy&action=eth_blockNumber",
    ]) {
      const response = await app.inject({ method: "GET", url });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: "0", message: "NOTOK", result: text });
    }
    const response = await app.inject({
      method: "GET",
      url: `/v2/api?chainId=${config.chain.id}&module=proxy&action=eth_blockNumber`,
    });
    expect(response.json()).toMatchObject({ jsonrpc: "2.0", id: 1, result: expect.stringMatching(/^0x/) });
  });

  test("apikey: ignored without api.etherscanApiKeys, else one of them", async () => {
    const keyed = await buildApp(
      { ...pipeline.common, config: { ...config, api: { ...config.api, etherscanApiKeys: ["k-one"] } } },
      { database: db.database, chain: pipeline.chain },
    );
    try {
      const ask = (key: string) =>
        keyed
          .inject({ method: "GET", url: `/api?module=proxy&action=eth_blockNumber${key}` })
          .then((r) => r.json());
      expect(await ask("")).toEqual({ status: "0", message: "NOTOK", result: "Invalid API Key" });
      expect(await ask("&apikey=wrong")).toEqual({
        status: "0",
        message: "NOTOK",
        result: "Invalid API Key",
      });
      expect(await ask("&apikey=k-one")).toMatchObject({ jsonrpc: "2.0", result: expect.any(String) });
    } finally {
      await keyed.close();
    }
    const open = await app.inject({
      method: "GET",
      url: "/api?module=proxy&action=eth_blockNumber&apikey=anything",
    });
    expect(open.json()).toMatchObject({ jsonrpc: "2.0" });
  });

  test("rate limit: over it, HTTP 200 Max rate limit reached; /api/* stays 429 problem+json", async () => {
    const limited = await buildApp(
      { ...pipeline.common, config: { ...config, api: { ...config.api, rateLimitPerMinute: 2 } } },
      { database: db.database, chain: pipeline.chain },
    );
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) {
        answers.push(
          await limited.inject({ method: "GET", url: "/api?module=contract&action=getabi&address=0x0" }),
        );
      }
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
      expect(answers[2]!.json()).toEqual({ status: "0", message: "NOTOK", result: "Max rate limit reached" });
      const other = await limited.inject({ method: "GET", url: "/api/stats" });
      expect(other.statusCode).toBe(429);
      expect(other.headers["content-type"]).toContain("application/problem+json");
    } finally {
      await limited.close();
    }
  });

  test("cache: with ingest events, store answers are the uncached ones, and follow a new transaction", async () => {
    const events = createLocalBroadcaster();
    const cached = await buildApp(pipeline.common, { database: db.database, chain: pipeline.chain, events });
    try {
      const urls = [
        `/api?module=account&action=txlist&address=${user()}&sort=desc&offset=5`,
        `/api?module=account&action=tokentx&address=${user()}&sort=desc&offset=5`,
        `/api?module=logs&action=getLogs&address=${token("DEMO")}&offset=5`,
      ];
      const same = async () => {
        for (const url of [...urls, ...urls]) {
          const [a, b] = [await cached.inject({ url }), await app.inject({ url })];
          expect(a.body, url).toBe(b.body);
        }
      };
      await same();
      const wallet = createWalletClient({ transport: http(chain.anvil.url) });
      const hash = await wallet.writeContract({
        account: chain.deployment.users[0]!,
        chain: null,
        address: token("DEMO"),
        abi: erc20Abi,
        functionName: "transfer",
        args: [NOBODY, 1n],
      });
      await client.waitForTransactionReceipt({ hash });
      const from = pipeline.events.length;
      head = await pipeline.catchUp();
      events.publish(pipeline.events.slice(from));
      // The indexed head is read at most every second: after it, every answer counts to the new head.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await same();
      const latest = (await cached.inject({ url: urls[0]! })).json() as { result: Row[] };
      expect(latest.result[0]!.hash).toBe(hash);
    } finally {
      await cached.close();
    }
  });

  test("routes: /api/* JSON routes and their 404 are unchanged", async () => {
    const stats = await app.inject({ method: "GET", url: "/api/stats" });
    expect(stats.statusCode).toBe(200);
    expect(stats.json()).not.toHaveProperty("status");
    const missing = await app.inject({ method: "GET", url: "/api/nope" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: "NOT_FOUND" });
    const slash = await app.inject({ method: "GET", url: "/api/?module=account" });
    expect(slash.statusCode).toBe(404);
  });
});

describe("node refusals", () => {
  test("balance: a JSON-RPC error about the request is its answer; the provider refusing protoscan is a failure", async () => {
    const proxy = await startRpcProxy({ upstream: chain.anvil.url });
    const common = { ...pipeline.common, config: { ...config, rpc: { ...config.rpc, urls: [proxy.url] } } };
    const proxied = createChainClient(common, { maxRetries: 0, baseDelayMs: 5, maxDelayMs: 10 });
    const fronted = await buildApp(pipeline.common, { database: db.database, chain: proxied });
    const balance = () =>
      fronted
        .inject({ method: "GET", url: `/api?module=account&action=balance&address=${user()}` })
        .then((r) => r.json());
    try {
      proxy.inject({
        kind: "rpcError",
        method: "eth_getBalance",
        code: -32602,
        message: "invalid argument 1: hex number > 64 bits",
        times: 1,
      });
      expect(await balance()).toEqual({
        status: "0",
        message: "NOTOK",
        result: "Error! invalid argument 1: hex number > 64 bits",
      });
      // A provider's 401 carries a JSON-RPC error too (Alchemy's "Must be authenticated!"): the operator's
      // key is wrong, which the caller must not be told as if it were their input.
      proxy.inject({
        kind: "http",
        status: 401,
        method: "eth_getBalance",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          error: { code: -32600, message: "Must be authenticated!" },
        }),
        times: 1,
      });
      expect(await balance()).toEqual({
        status: "0",
        message: "NOTOK",
        result: "Error! Something went wrong, please retry later",
      });
      expect((await balance()).result).toBe((await client.getBalance({ address: user() })).toString());
    } finally {
      await fronted.close();
      proxied.close();
      await proxy.close();
    }
  });
});

async function lastBlockAtOrBefore(timestamp: bigint): Promise<number> {
  let n = Number(await client.getBlockNumber());
  while (n > 0 && (await client.getBlock({ blockNumber: BigInt(n) })).timestamp > timestamp) n--;
  return n;
}

async function firstBlockAtOrAfter(timestamp: bigint): Promise<number> {
  let n = 0;
  while ((await client.getBlock({ blockNumber: BigInt(n) })).timestamp < timestamp) n++;
  return n;
}
