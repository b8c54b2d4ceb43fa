import { resolveConfig } from "../../src/config/resolveConfig.ts";
import type { Config } from "../../src/config/schema.ts";
import { demoConfigFile } from "../../src/demo/demoConfig.ts";
import type { BenchChain } from "./buildChain.ts";

/**
 * The config every phase uses: the demo config of the bench chain, with `indexer.logChunkBlocks` 5000 and
 * `rpc.batchSize` 100 (the shipped defaults) spelled out so the floor and protoscan chunk and batch alike.
 */
export function benchConfig(chain: BenchChain): Config {
  const file = demoConfigFile(chain.deployment, { rpcUrl: chain.rpcUrl });
  return resolveConfig(
    { ...file, indexer: { ...file.indexer, logChunkBlocks: 5000 }, rpc: { ...file.rpc, batchSize: 100 } },
    null,
  );
}
