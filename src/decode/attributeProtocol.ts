import type { Address } from "../config/schema.ts";
import type { AbiRegistry } from "./abiRegistry.ts";

/** The protocol a configured contract or tracked token belongs to, or undefined. */
export function protocolOf(registry: AbiRegistry, address: Address | null): string | undefined {
  if (!address) return undefined;
  return registry.contracts.get(address)?.protocol ?? registry.tokens.get(address)?.protocol;
}

/**
 * Attribute a transaction to a protocol (SPEC §3): the protocol of `to`; else the protocol whose contract or
 * token emitted the first relevant log. A `hint` (track-tx) wins only when the transaction touches a
 * contract or token of that protocol, so a hint can never attribute a transaction to a protocol it does not
 * touch. undefined means the transaction touches nothing configured: it is not relevant.
 */
export function attributeProtocol(
  registry: AbiRegistry,
  to: Address | null,
  logEmitters: readonly Address[],
  hint?: string,
): string | undefined {
  const touched = [protocolOf(registry, to), ...logEmitters.map((a) => protocolOf(registry, a))];
  if (hint && touched.includes(hint)) return hint;
  return touched.find((p) => p !== undefined);
}
