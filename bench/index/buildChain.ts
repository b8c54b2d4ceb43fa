import { readFile, writeFile } from "node:fs/promises";
import { generateTransactions } from "../../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../../src/demo/anvil.ts";
import { type DemoDeployment, deployDemo } from "../../src/demo/deploy.ts";
import { NonRetryableError } from "../../src/internal/errors.ts";

/** The chain every phase indexes: built once per run, handed to the phase processes as a JSON file. */
export type BenchChain = {
  rpcUrl: string;
  deployment: DemoDeployment;
  /** first block indexed (the demo deployment's first block, like `indexer.startBlock`) */
  fromBlock: number;
  /** the head once every transaction is mined: the last block indexed */
  toBlock: number;
  /** protocol transactions generated (the setup transactions of the deployment come on top) */
  generated: number;
  perBlock: number;
  /** how long building the chain took */
  buildSeconds: number;
};

/**
 * Start anvil, deploy the demo protocols and mine `count` mixed protocol transactions (DEMO and USDC
 * transfers, router swaps both ways, vault deposits), `perBlock` per block, with automine off and
 * `anvil_mine` (see `generateTransactions`). The caller stops the returned anvil.
 */
export async function buildChain(options: {
  count: number;
  perBlock: number;
}): Promise<{ anvil: Anvil; chain: BenchChain }> {
  const started = performance.now();
  // anvil keeps the state of only its latest blocks in memory and answers older ones from states it persists,
  // up to this many: without it, a chain of more than about 5,000 blocks (--count 50000) fails protoscan's
  // historical eth_getCode/eth_call ("block height is 5077 but requested was 0"), as a pruned node would.
  // A block's gas limit fits `perBlock` transactions (a swap takes up to about 150,000 gas): above about 200 per
  // block, anvil's default 30M would spread a batch over several blocks.
  const gasLimit = Math.max(30_000_000, options.perBlock * 200_000);
  const anvil = await startAnvil({
    extraArgs: ["--max-persisted-states", "1000000", "--gas-limit", String(gasLimit)],
  });
  try {
    const deployment = await deployDemo({ rpcUrl: anvil.url });
    const generated = await generateTransactions({
      rpcUrl: anvil.url,
      deployment,
      count: options.count,
      perBlock: options.perBlock,
    });
    return {
      anvil,
      chain: {
        rpcUrl: anvil.url,
        deployment,
        fromBlock: deployment.startBlock,
        toBlock: generated.toBlock,
        generated: generated.count,
        perBlock: options.perBlock,
        buildSeconds: (performance.now() - started) / 1000,
      },
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

export async function writeBenchChain(path: string, chain: BenchChain): Promise<void> {
  await writeFile(path, JSON.stringify(chain));
}

/** Read what {@link writeBenchChain} wrote (a phase process reads the chain its parent built). */
export async function readBenchChain(path: string): Promise<BenchChain> {
  const parsed: unknown = JSON.parse(await readFile(path, "utf8"));
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    !("rpcUrl" in parsed) ||
    typeof parsed.rpcUrl !== "string" ||
    !("deployment" in parsed) ||
    !("toBlock" in parsed) ||
    typeof parsed.toBlock !== "number"
  ) {
    throw new NonRetryableError(`${path} is not a bench chain description`);
  }
  return parsed as BenchChain;
}
