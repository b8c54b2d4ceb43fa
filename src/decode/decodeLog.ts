import { type AbiEvent, type AbiParameter, decodeAbiParameters, type Hex } from "viem";
import type { AbiRegistry } from "./abiRegistry.ts";
import { holdsWords, type StaticKind, staticKind, wordAt, wordValue } from "./decodeArgs.ts";
import { namedArgs, stringifyValue } from "./stringifyArgs.ts";

export type DecodedLog = { eventName: string; args: Record<string, unknown> };

/**
 * Decode one log with every known event that has its topic0 (strictly: topic count and data must fit,
 * which tells ERC-20 `Transfer` from ERC-721 `Transfer`). null when none fits.
 */
export function decodeLog(registry: AbiRegistry, topics: readonly Hex[], data: Hex): DecodedLog | null {
  const topic0 = topics[0];
  if (!topic0) return null;
  for (const event of registry.eventsByTopic.get(topic0.toLowerCase()) ?? []) {
    const args = decodeEventArgs(event, topics, data);
    if (args) return { eventName: event.name, args };
  }
  return null;
}

/**
 * `namedArgs(event.inputs, decodeEventValues(event, topics, data))`, or null where that is null. When every
 * input is static and elementary (or an indexed one stored as its hash), the words are read from the topics
 * and the data directly, as `decodeArgs` does for calls (see there for why); anything the fast path does not
 * settle goes to `decodeEventValues`.
 */
export function decodeEventArgs(
  event: AbiEvent,
  topics: readonly Hex[],
  data: Hex,
): Record<string, unknown> | null {
  const fast = fastEventArgs(event, topics, data);
  if (fast) return fast;
  const values = decodeEventValues(event, topics, data);
  return values && namedArgs(event.inputs, values);
}

/**
 * Per event: for each input, the kind of its word or "hash" (indexed and stored as its hash: the topic is
 * the value), and how many inputs are in the data; null when some input has no fast path.
 */
const eventPlans = new WeakMap<AbiEvent, { kinds: readonly (StaticKind | "hash")[]; words: number } | null>();

function eventPlan(event: AbiEvent): { kinds: readonly (StaticKind | "hash")[]; words: number } | null {
  let plan = eventPlans.get(event);
  if (plan === undefined) {
    const kinds = event.inputs.map((input) =>
      input.indexed && isHashedWhenIndexed(input) ? ("hash" as const) : staticKind(input.type),
    );
    plan = kinds.every((k) => k !== null)
      ? { kinds: kinds as (StaticKind | "hash")[], words: event.inputs.filter((i) => !i.indexed).length }
      : null;
    eventPlans.set(event, plan);
  }
  return plan;
}

function fastEventArgs(event: AbiEvent, topics: readonly Hex[], data: Hex): Record<string, unknown> | null {
  const plan = eventPlan(event);
  if (plan === null) return null;
  const { kinds, words } = plan;
  if (words > 0 && !holdsWords(data, words)) return null;
  const out: Record<string, unknown> = {};
  let topic = 1;
  let word = 0;
  for (let i = 0; i < event.inputs.length; i++) {
    const input = event.inputs[i]!;
    const kind = kinds[i]!;
    let value: string | null;
    if (input.indexed) {
      const raw = topics[topic++];
      if (raw === undefined) return null;
      if (kind === "hash") value = stringifyValue(raw) as string;
      else value = TOPIC.test(raw) ? wordValue(kind, raw.slice(2)) : null;
    } else {
      value = wordValue(kind as StaticKind, wordAt(data, word++));
    }
    if (value === null) return null;
    out[input.name || `arg${i}`] = value;
  }
  return out;
}

const TOPIC = /^0x[0-9a-fA-F]{64}$/;

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
