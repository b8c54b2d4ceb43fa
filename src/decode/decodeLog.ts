import { type AbiEvent, type AbiParameter, decodeAbiParameters, type Hex } from "viem";
import type { AbiRegistry } from "./abiRegistry.ts";
import { namedArgs } from "./stringifyArgs.ts";

export type DecodedLog = { eventName: string; args: Record<string, unknown> };

/**
 * Decode one log with every known event that has its topic0 (strictly: topic count and data must fit,
 * which tells ERC-20 `Transfer` from ERC-721 `Transfer`). null when none fits.
 */
export function decodeLog(registry: AbiRegistry, topics: readonly Hex[], data: Hex): DecodedLog | null {
  const topic0 = topics[0];
  if (!topic0) return null;
  for (const event of registry.eventsByTopic.get(topic0.toLowerCase()) ?? []) {
    const values = decodeEventValues(event, topics, data);
    if (values) return { eventName: event.name, args: namedArgs(event.inputs, values) };
  }
  return null;
}

/**
 * The values of `event`'s inputs, in ABI order, or null when the log does not fit it. The same rules as
 * viem's `decodeEventLog({ strict: true })` (each indexed input needs its topic; indexed dynamic types are
 * their topic hash; non-indexed inputs need data that decodes), without what makes that function slow on a
 * backfill: it hashes the event signature again (keccak-256) for every log to find the ABI item, which the
 * registry has already matched by topic0.
 */
export function decodeEventValues(event: AbiEvent, topics: readonly Hex[], data: Hex): unknown[] | null {
  const values: unknown[] = new Array(event.inputs.length);
  const nonIndexed: AbiParameter[] = [];
  let topic = 1;
  try {
    for (let i = 0; i < event.inputs.length; i++) {
      const input = event.inputs[i]!;
      if (!input.indexed) {
        nonIndexed.push(input);
        continue;
      }
      const value = topics[topic++];
      if (!value) return null;
      values[i] = isHashedWhenIndexed(input) ? value : decodeAbiParameters([input], value)[0];
    }
    if (nonIndexed.length === 0) return values;
    if (!data || data === "0x") return null;
    const decoded = decodeAbiParameters(nonIndexed, data);
    let next = 0;
    for (let i = 0; i < event.inputs.length; i++) if (!event.inputs[i]!.indexed) values[i] = decoded[next++];
    return values;
  } catch {
    // topics or data do not fit this candidate
    return null;
  }
}

/** Indexed strings, bytes, tuples and arrays are stored as the keccak-256 of their encoding, not decodable. */
function isHashedWhenIndexed(param: AbiParameter): boolean {
  return (
    param.type === "string" || param.type === "bytes" || param.type === "tuple" || /\]$/.test(param.type)
  );
}
