import { type AbiEvent, type AbiFunction, erc20Abi, toEventSelector, toFunctionSelector } from "viem";
import type { Address, Config, ContractConfig, TokenConfig } from "../config/schema.ts";

/** A configured contract with the protocol it belongs to. */
export type KnownContract = ContractConfig & { protocol: string };

/**
 * Everything decoding needs, built once from the config: ABI items by selector/topic, and what each
 * configured address is. Lookups are by lowercase address.
 */
export type AbiRegistry = {
  /** 4-byte selector -> candidate functions; the called contract's own ABI items come first when it has one */
  functionsBySelector: Map<string, AbiFunction[]>;
  /** per contract: its own selector -> function (so the called contract's ABI wins over a clash) */
  contractFunctions: Map<Address, Map<string, AbiFunction>>;
  /** topic0 -> candidate events (ERC-20 and ERC-721 `Transfer` share a topic0 and differ in indexed args) */
  eventsByTopic: Map<string, AbiEvent[]>;
  contracts: Map<Address, KnownContract>;
  tokens: Map<Address, TokenConfig>;
  /** protocol id -> its actionType overrides */
  actions: Map<string, Record<string, string>>;
};

/** Build the registry from every ABI in the config plus the ERC-20 ABI. */
export function createAbiRegistry(config: Pick<Config, "protocols" | "tokens">): AbiRegistry {
  const functionsBySelector = new Map<string, AbiFunction[]>();
  const eventsByTopic = new Map<string, AbiEvent[]>();
  const contractFunctions = new Map<Address, Map<string, AbiFunction>>();
  const seenFunctions = new Set<string>();
  const seenEvents = new Set<string>();

  const addAbi = (abi: readonly unknown[], owner?: Address) => {
    const own = new Map<string, AbiFunction>();
    for (const item of abi as readonly (AbiFunction | AbiEvent | { type: string })[]) {
      if (item.type === "function") {
        const fn = item as AbiFunction;
        const selector = toFunctionSelector(fn);
        own.set(selector, fn);
        const signature = `${selector}:${JSON.stringify(fn.inputs)}`;
        if (seenFunctions.has(signature)) continue;
        seenFunctions.add(signature);
        push(functionsBySelector, selector, fn);
      } else if (item.type === "event") {
        const event = item as AbiEvent;
        const signature = `${toEventSelector(event)}:${JSON.stringify(event.inputs)}`;
        if (seenEvents.has(signature)) continue;
        seenEvents.add(signature);
        push(eventsByTopic, toEventSelector(event), event);
      }
    }
    if (owner) contractFunctions.set(owner, own);
  };

  const contracts = new Map<Address, KnownContract>();
  const actions = new Map<string, Record<string, string>>();
  for (const protocol of config.protocols) {
    actions.set(protocol.id, protocol.actions);
    for (const contract of protocol.contracts) {
      contracts.set(contract.address, { ...contract, protocol: protocol.id });
      addAbi(contract.abi, contract.address);
    }
  }
  addAbi(erc20Abi);

  const tokens = new Map<Address, TokenConfig>();
  for (const token of config.tokens) tokens.set(token.address, token);

  return { functionsBySelector, contractFunctions, eventsByTopic, contracts, tokens, actions };
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
