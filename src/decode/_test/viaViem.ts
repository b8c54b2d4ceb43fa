import { type AbiEvent, decodeEventLog, type Hex } from "viem";
import { namedArgs } from "../stringifyArgs.ts";

/**
 * The reference for decoding a log with `event`: viem's strict `decodeEventLog`, its values in ABI order,
 * named and stringified as the API serves them; null where it throws.
 */
export function eventArgsViaViem(event: AbiEvent, topics: Hex[], data: Hex): Record<string, unknown> | null {
  try {
    const decoded = decodeEventLog({ abi: [event], topics: topics as [Hex, ...Hex[]], data, strict: true });
    const args = decoded.args as Record<string, unknown> | readonly unknown[] | undefined;
    const values = event.inputs.map((input, i) =>
      Array.isArray(args)
        ? args[i]
        : (args as Record<string, unknown> | undefined)?.[input.name ?? String(i)],
    );
    return namedArgs(event.inputs, values);
  } catch {
    return null;
  }
}
