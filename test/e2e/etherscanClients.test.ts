import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { EtherscanProvider, JsonRpcProvider, Network } from "ethers";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import type { ContractConfig } from "../../src/config/schema.ts";
import { generateTransactions } from "../../src/demo/activity.ts";
import { REPO_ROOT } from "../../src/internal/repoRoot.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

/**
 * The real clients that speak Etherscan's API, pointed at protoscan, each answer compared with the same
 * question asked of anvil directly (SPEC §11). ethers checks the chain id against its list of Etherscan
 * networks: anvil runs as Sepolia's id.
 */
const CHAIN_ID = 11_155_111;

const run = promisify(execFile);
const require = createRequire(import.meta.url);

let chain: DemoChain;
let db: TestDatabase;
let pipeline: TestPipeline;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  chain = await setupDemoChain({ anvil: { chainId: CHAIN_ID } });
  await generateTransactions({
    rpcUrl: chain.anvil.url,
    deployment: chain.deployment,
    count: 12,
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
  baseUrl = await app.listen({ host: "127.0.0.1", port: 0 });
});

afterAll(async () => {
  await app?.close();
  await pipeline?.close();
  await db?.cleanup();
  await chain?.anvil.stop();
});

/**
 * ethers' EtherscanProvider with its URLs on protoscan's `/v2/api` (ethers 6 builds them in `getUrl` and
 * `getPostUrl`; `getBaseUrl` is no longer used for requests).
 */
class ProtoscanProvider extends EtherscanProvider {
  readonly #base: string;
  constructor(base: string) {
    super(Network.from(CHAIN_ID), "any-key");
    this.#base = base;
  }
  override getBaseUrl(): string {
    return this.#base;
  }
  override getUrl(module: string, params: Record<string, string>): string {
    const etherscan = super.getUrl(module, params);
    return etherscan.replace("https://api.etherscan.io", this.#base);
  }
  override getPostUrl(): string {
    return super.getPostUrl().replace("https://api.etherscan.io", this.#base);
  }
}

/** An ethers object as JSON (its own `toJSON`, bigints tagged), without the provider it came from. */
const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

/** A configured contract whose ABI has a view function without inputs (to call through `getContract`). */
function contractWithView(): { contract: ContractConfig; fn: string } {
  for (const protocol of chain.config.protocols) {
    for (const contract of protocol.contracts) {
      const fn = (
        contract.abi as { type?: string; name?: string; stateMutability?: string; inputs?: unknown[] }[]
      ).find(
        (item) => item.type === "function" && item.stateMutability === "view" && item.inputs?.length === 0,
      );
      if (fn?.name) return { contract, fn: fn.name };
    }
  }
  throw new Error("no configured contract has a view function without inputs");
}

describe("ethers EtherscanProvider", () => {
  test("block number, balance, transaction, receipt, code, call and getContract equal anvil's", async () => {
    const etherscan = new ProtoscanProvider(baseUrl);
    const direct = new JsonRpcProvider(chain.anvil.url, CHAIN_ID, { staticNetwork: true });
    try {
      expect(await etherscan.getBlockNumber()).toBe(await direct.getBlockNumber());
      const user = chain.deployment.users[0]!;
      expect(await etherscan.getBalance(user)).toBe(await direct.getBalance(user));
      expect(await etherscan.getTransactionCount(user)).toBe(await direct.getTransactionCount(user));

      const block = await direct.getBlock("latest");
      const hash = block!.transactions[0]!;
      const [tx, directTx] = await Promise.all([etherscan.getTransaction(hash), direct.getTransaction(hash)]);
      expect(json(tx)).toEqual(json(directTx));
      const [receipt, directReceipt] = await Promise.all([
        etherscan.getTransactionReceipt(hash),
        direct.getTransactionReceipt(hash),
      ]);
      expect(json(receipt)).toEqual(json(directReceipt));
      const viaBlock = await etherscan.getBlock(block!.number);
      expect(json(viaBlock)).toEqual(json(block));

      const token = chain.deployment.tokens.DEMO.address;
      expect(await etherscan.getCode(token)).toBe(await direct.getCode(token));
      const totalSupply = { to: token, data: "0x18160ddd" };
      expect(await etherscan.call(totalSupply)).toBe(await direct.call(totalSupply));

      const { contract, fn } = contractWithView();
      const viaAbi = await etherscan.getContract(contract.address);
      expect(viaAbi).not.toBeNull();
      const answer = await viaAbi!.getFunction(fn).staticCall();
      const directContract = viaAbi!.connect(direct) as typeof viaAbi;
      expect(answer).toEqual(await directContract!.getFunction(fn).staticCall());
      // An address without a configured ABI: ethers reads "not verified" as no contract.
      expect(await etherscan.getContract(token)).toBeNull();
    } finally {
      etherscan.destroy();
      direct.destroy();
    }
  });
});

describe("wagmi CLI blockExplorer plugin", () => {
  test("generate fetches each configured ABI from protoscan", async () => {
    const dir = await mkdtemp(join(tmpdir(), "protoscan-wagmi-"));
    try {
      const contracts = chain.config.protocols.flatMap((p) => p.contracts).slice(0, 2);
      // An absolute path: the temporary directory has no node_modules to resolve `@wagmi/cli/plugins` from.
      const plugins = require.resolve("@wagmi/cli/plugins");
      const config = `import { blockExplorer } from ${JSON.stringify(plugins)};
export default {
  out: "generated.js",
  contracts: [],
  plugins: [
    blockExplorer({
      baseUrl: ${JSON.stringify(`${baseUrl}/v2/api`)},
      chainId: ${CHAIN_ID},
      cacheDuration: 0,
      contracts: ${JSON.stringify(contracts.map((c, i) => ({ name: `Contract${i}`, address: c.address })))},
    }),
  ],
};
`;
      await writeFile(join(dir, "wagmi.config.mjs"), config);
      // The package's `wagmi` bin, as `npx wagmi generate` runs it.
      const cli = join(REPO_ROOT, "node_modules", "@wagmi", "cli", "dist", "esm", "cli.js");
      // Its cache lives under $HOME: a temporary one, so that only protoscan's answers can make the ABIs.
      await run(process.execPath, [cli, "generate", "--config", "wagmi.config.mjs"], {
        cwd: dir,
        env: { ...process.env, HOME: dir },
        timeout: 60_000,
      });
      const generated = (await import(pathToFileURL(join(dir, "generated.js")).href)) as Record<
        string,
        unknown
      >;
      contracts.forEach((contract, i) => {
        expect(generated[`contract${i}Abi`]).toEqual(contract.abi);
        expect(String(generated[`contract${i}Address`]).toLowerCase()).toBe(contract.address.toLowerCase());
      });
      expect(await readFile(join(dir, "generated.js"), "utf8")).toContain("contract0Abi");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
