import type { AbiFunction, AbiParameter } from "viem";
import type { Address, Config, TokenConfig } from "../config/schema.ts";
import { type AbiRegistry, createAbiRegistry } from "../decode/abiRegistry.ts";
import type { Common } from "../internal/common.ts";
import type { Db } from "../store/createDatabase.ts";
import { CURSOR_NAME, getCursor } from "../store/indexerState.ts";
import type { RouteDeps } from "./appDeps.ts";
import { createTtlCache } from "./cache/createTtlCache.ts";
import { createTotalSupplyReader, type TotalSupplyReader } from "./createTotalSupplyReader.ts";
import type { EtherscanAnswer } from "./etherscanEnvelope.ts";
import type { EtherscanParams } from "./etherscanParams.ts";

/** One action of a module: its parameters in, an Etherscan answer out (errors thrown as `EtherscanError`). */
export type ActionHandler = (params: EtherscanParams) => Promise<EtherscanAnswer>;

/** module -> action -> handler. */
export type EtherscanModules = Record<string, Record<string, ActionHandler>>;

/** What every module's actions share: the store, the node, the configuration and the caches over them. */
export type EtherscanContext = {
  db: Db;
  deps: RouteDeps;
  config: Config;
  /** tracked tokens by lowercase address */
  tokens: ReadonlyMap<string, TokenConfig>;
  registry: AbiRegistry;
  totalSupply: TotalSupplyReader;
  /** the last indexed block (the committed cursor, read at most every second): what confirmations count to */
  indexedHead(): Promise<number>;
};

export function createEtherscanContext(common: Common, deps: RouteDeps): EtherscanContext {
  const db = deps.database.db;
  const head = createTtlCache<"head", number>({ ttlMs: 1000 });
  return {
    db,
    deps,
    config: common.config,
    tokens: new Map(common.config.tokens.map((t) => [t.address.toLowerCase(), t])),
    registry: createAbiRegistry(common.config),
    totalSupply: createTotalSupplyReader({
      chain: deps.chain,
      logger: common.logger.child({ module: "api" }),
    }),
    indexedHead: () =>
      head.get("head", async () => {
        const status = deps.indexerStatus?.();
        if (status?.indexedBlock !== null && status?.indexedBlock !== undefined) return status.indexedBlock;
        return (await getCursor(db, CURSOR_NAME))?.blockNumber ?? 0;
      }),
  };
}

/**
 * Etherscan's `functionName` of a call: the function's signature with parameter names, as
 * `transfer(address _to, uint256 _value)`, from the configured ABIs (the called contract's own first, then any
 * function with the selector); empty when no ABI knows the selector or for a plain transfer.
 */
export function etherscanFunctionName(registry: AbiRegistry, to: string | null, methodId: string): string {
  if (methodId.length !== 10) return "";
  const fn: AbiFunction | undefined =
    (to ? registry.contractFunctions.get(to as Address)?.get(methodId) : undefined) ??
    registry.functionsBySelector.get(methodId)?.[0];
  return fn ? `${fn.name}(${fn.inputs.map(formatParameter).join(", ")})` : "";
}

/** `uint256 _value`, `(address to, uint256 amount)[] calls`: a parameter's type (tuples spelled out) and name. */
function formatParameter(parameter: AbiParameter): string {
  const type =
    parameter.type.startsWith("tuple") && "components" in parameter
      ? `(${parameter.components.map(formatParameter).join(", ")})${parameter.type.slice("tuple".length)}`
      : parameter.type;
  return parameter.name ? `${type} ${parameter.name}` : type;
}
