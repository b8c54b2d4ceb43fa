import type { FastifyInstance } from "fastify";
import { type Address, createPublicClient, erc20Abi, getAddress, http, parseEther, parseUnits } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { createChainClient } from "../../src/chain/createChainClient.ts";
import { resolveConfig } from "../../src/config/resolveConfig.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { findFreePort } from "../../src/demo/anvil.ts";
import { createDemoClient } from "../../src/demo/demoClient.ts";
import { demoConfigFile } from "../../src/demo/demoConfig.ts";
import { deployDemo } from "../../src/demo/deploy.ts";
import { type Anvil, startTestAnvil } from "../helpers/anvil.ts";
import {
  cursorPages,
  type ExpectedTransaction,
  newestFirst,
  offsetPages,
  readExpectedTransactions,
} from "../helpers/chainActivity.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import type { DemoChain } from "../helpers/demo.ts";
import { nativeTransfer, swapExact, tokenTransfer, vaultClaim } from "../helpers/demoTxs.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

type TxJson = { txHash: string; protocol: string };
type AddressPage = { address: string; transactions: TxJson[]; nextCursor: string | null };

/** Receives DEMO once and never sends anything: a transfer party only. */
const RECIPIENT = "0x00000000000000000000000000000000c0ffee01" as Address;

describe("GET /api/address/:address, /api/address/:address/transactions", () => {
  let anvil: Anvil | undefined;
  let chain: DemoChain;
  let db: TestDatabase;
  let pipeline: TestPipeline;
  let app: FastifyInstance;
  let expected: ExpectedTransaction[];
  const client = () => createPublicClient({ transport: http(chain.anvil.url) });
  const get = (url: string) => app.inject({ method: "GET", url });

  beforeAll(async () => {
    // Kept apart from the deployment, so that afterAll stops the node even when a slow setup times out.
    anvil = await startTestAnvil();
    const deployment = await deployDemo({ rpcUrl: anvil.url });
    const configFile = demoConfigFile(deployment, { rpcUrl: anvil.url });
    chain = { anvil, deployment, configFile, config: resolveConfig(configFile, null) };
    const d = chain.deployment;
    const [u0, u1, u2] = d.users as [Address, Address, Address];
    await generateTransactions({ rpcUrl: chain.anvil.url, deployment: d, count: 30, perBlock: 5 });
    const demo = createDemoClient(chain.anvil.url);
    await demo.send(swapExact(d, u0, ["USDC", "WETH"], parseUnits("100", 6))); // WETH: a balanceOf-mode token
    await demo.send(tokenTransfer(d, "DEMO", u1, RECIPIENT, parseUnits("5", 18)));
    // A minute of staking rewards, so that the claim pays RWD (a token kept in balanceOf mode) from the vault.
    await demo.rpc("evm_increaseTime", [60]);
    await demo.send(vaultClaim(d, u2));
    db = await createTestDatabase();
    pipeline = await createTestPipeline({ config: chain.config, database: db.database });
    const head = await pipeline.catchUp();
    expected = await readExpectedTransactions(chain.anvil.url, chain.config, d.startBlock, head);
    app = await buildApp(pipeline.common, {
      database: db.database,
      chain: pipeline.chain,
      indexerStatus: pipeline.indexer.status,
    });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await pipeline?.close();
    await db?.cleanup();
    await anvil?.stop();
  });

  const involving = (address: string) =>
    newestFirst(expected.filter((t) => t.parties.has(address.toLowerCase())));

  /** The address view computed from the node and the stored transfers, without protoscan. */
  async function expectedView(address: Address) {
    const c = client();
    const lower = address.toLowerCase();
    const code = await c.getCode({ address });
    const tokenBalances = [];
    for (const token of chain.config.tokens) {
      const balance = await c.readContract({
        address: token.address,
        abi: erc20Abi,
        functionName: "balanceOf",
        args: [address],
      });
      // An exclusive token's whole history is indexed; another one is cached for parties of stored transfers.
      const cached =
        token.exclusive ||
        expected.some((t) =>
          t.transfers.some((x) => x.token === token.address && (x.from === lower || x.to === lower)),
        );
      if (balance > 0n && cached) {
        tokenBalances.push({
          contractAddress: getAddress(token.address),
          tokenBalance: balance.toString(),
          symbol: token.symbol,
          name: token.name,
          decimals: token.decimals,
          logo: token.logo,
        });
      }
    }
    return {
      address: getAddress(address),
      balance: (await c.getBalance({ address })).toString(),
      isContract: code !== undefined && code !== "0x",
      tokenBalances,
      transactionCount: involving(address).length,
    };
  }

  test("default: the view equals the node's balance and code and balanceOf of each tracked token", async () => {
    const d = chain.deployment;
    const addresses = [
      ...d.users,
      d.deployer,
      RECIPIENT,
      d.contracts.router,
      d.contracts.vault,
      d.pairs.demoUsdc.address,
    ];
    for (const address of addresses) {
      const response = await get(`/api/address/${address.toLowerCase()}`);
      expect(response.statusCode).toBe(200);
      expect(response.json(), address).toEqual(await expectedView(address));
    }
    // Spot checks that the cases above exercise what they should.
    const u0 = (await get(`/api/address/${d.users[0]}`)).json();
    expect(u0.tokenBalances.map((t: { symbol: string }) => t.symbol)).toEqual(["DEMO", "USDC", "WETH"]);
    const recipient = (await get(`/api/address/${RECIPIENT.toUpperCase().replace("0X", "0x")}`)).json();
    expect(recipient).toEqual({
      address: getAddress(RECIPIENT),
      balance: "0",
      isContract: false,
      tokenBalances: [
        expect.objectContaining({ symbol: "DEMO", tokenBalance: parseUnits("5", 18).toString() }),
      ],
      transactionCount: 1,
    });
    expect((await get(`/api/address/${d.contracts.router}`)).json().isContract).toBe(true);
    // RWD is not exclusive: u2 holds it in the cache because its claim transfer was stored.
    const u2 = (await get(`/api/address/${d.users[2]}`)).json();
    expect(u2.tokenBalances.map((t: { symbol: string }) => t.symbol)).toContain("RWD");
  });

  test("default: any valid address answers 200", async () => {
    const nobody = "0x1234567890abcdef1234567890abcdef12345678";
    const response = await get(`/api/address/${nobody}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      address: getAddress(nobody),
      balance: "0",
      isContract: false,
      tokenBalances: [],
      transactionCount: 0,
    });
    const empty = (await get(`/api/address/${nobody}/transactions`)).json();
    expect(empty).toEqual({ address: getAddress(nobody), transactions: [], nextCursor: null });
  });

  test("behavior: the native balance is cached about 5 seconds", async () => {
    const target = "0x00000000000000000000000000000000c0ffee02" as Address;
    const url = `/api/address/${target}`;
    expect((await get(url)).json().balance).toBe("0");
    await createDemoClient(chain.anvil.url).send(
      nativeTransfer(chain.deployment.deployer, target, parseEther("1")),
    );
    expect((await get(url)).json().balance).toBe("0");
    await new Promise((resolve) => setTimeout(resolve, 5200));
    expect((await get(url)).json().balance).toBe(parseEther("1").toString());
  });

  test("default: transactions are those it sends, receives or transfers tokens in, newest first", async () => {
    const d = chain.deployment;
    for (const address of [
      d.users[0]!,
      RECIPIENT,
      d.contracts.router,
      d.pairs.demoUsdc.address,
      d.contracts.vault,
    ]) {
      const want = involving(address).map((t) => t.hash);
      expect(want.length, address).toBeGreaterThan(0);
      const url = `/api/address/${address}/transactions`;
      const byCursor = await cursorPages<AddressPage>(get, url, 6);
      const byOffset = await offsetPages<AddressPage>(get, url, 6);
      expect(byCursor.flatMap((p) => p.transactions.map((t) => t.txHash))).toEqual(want);
      expect(byOffset.flatMap((p) => p.transactions.map((t) => t.txHash))).toEqual(want);
      expect(byCursor.every((p) => p.address === getAddress(address))).toBe(true);
      expect(byCursor.at(-1)!.nextCursor).toBeNull();
    }
    // Items are the Transaction resource of GET /api/tx/:hash.
    const page = (await get(`/api/address/${d.users[0]}/transactions?limit=3`)).json() as AddressPage;
    for (const tx of page.transactions) expect(tx).toEqual((await get(`/api/tx/${tx.txHash}`)).json());
  });

  test("args: protocol keeps that protocol's transactions", async () => {
    const user = chain.deployment.users[0]!;
    for (const protocol of ["demovault", "demoswap"]) {
      const want = involving(user)
        .filter((t) => t.protocol === protocol)
        .map((t) => t.hash);
      expect(want.length).toBeGreaterThan(0);
      const pages = await cursorPages<AddressPage>(
        get,
        `/api/address/${user}/transactions?protocol=${protocol}`,
        4,
      );
      expect(pages.flatMap((p) => p.transactions.map((t) => t.txHash))).toEqual(want);
    }
    const upper = (await get(`/api/address/${user}/transactions?protocol=DEMOVAULT&limit=100`)).json();
    expect(upper.transactions).toHaveLength(involving(user).filter((t) => t.protocol === "demovault").length);
    const unknown = await get(`/api/address/${user}/transactions?protocol=nope`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({
      code: "PROTOCOL_NOT_FOUND",
      detail: "no protocol 'nope' is configured",
    });
  });

  test("error: a malformed address is 400 INVALID_ADDRESS on both endpoints", async () => {
    for (const bad of ["0x1234", "abc", `0x${"g".repeat(40)}`, `0x${"a".repeat(41)}`, `${"a".repeat(40)}`]) {
      for (const url of [`/api/address/${bad}`, `/api/address/${bad}/transactions`]) {
        const response = await get(url);
        expect(response.statusCode, url).toBe(400);
        expect(response.headers["content-type"]).toContain("application/problem+json");
        expect(response.json()).toMatchObject({
          type: "/docs/errors#INVALID_ADDRESS",
          code: "INVALID_ADDRESS",
        });
      }
    }
  });

  test("error: bad limit, offset and cursor are 400 INVALID_PARAMETER naming the parameter", async () => {
    const user = chain.deployment.users[0]!;
    const first = (await get(`/api/address/${user}/transactions?limit=2`)).json() as AddressPage;
    const cases: [string, string][] = [
      ["limit=0", "limit"],
      ["limit=-1", "limit"],
      ["limit=abc", "limit"],
      ["limit=2.5", "limit"],
      ["limit=101", "limit"],
      ["limit=1000", "limit"],
      ["offset=10001", "offset"],
      ["offset=x", "offset"],
      ["cursor=%%%", "cursor"],
      ["cursor=bm90LWEtY3Vyc29y", "cursor"],
      [`cursor=${first.nextCursor}&offset=0`, "cursor"],
    ];
    for (const [query, param] of cases) {
      const response = await get(`/api/address/${user}/transactions?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.json()).toMatchObject({ code: "INVALID_PARAMETER", status: 400 });
      expect(response.json().detail, query).toMatch(new RegExp(`^${param}: `));
    }
  });

  test("error: the node down is 503 UPSTREAM_UNAVAILABLE for the view; stored lists still answer", async () => {
    const deadUrl = `http://127.0.0.1:${await findFreePort()}`;
    const common = {
      ...pipeline.common,
      config: { ...chain.config, rpc: { ...chain.config.rpc, urls: [deadUrl] } },
    };
    const deadChain = createChainClient(common, { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 });
    const down = await buildApp(common, { database: db.database, chain: deadChain });
    try {
      const user = chain.deployment.users[0]!;
      const response = await down.inject({ method: "GET", url: `/api/address/${user}` });
      expect(response.statusCode).toBe(503);
      expect(response.headers["content-type"]).toContain("application/problem+json");
      expect(response.json()).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", status: 503 });
      expect(response.body).not.toContain(deadUrl);
      const list = await down.inject({ method: "GET", url: `/api/address/${user}/transactions?limit=1` });
      expect(list.statusCode).toBe(200);
    } finally {
      await down.close();
      deadChain.close();
    }
  });
});
