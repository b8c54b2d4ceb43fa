import { isRecord } from "../internal/isRecord.ts";
/** One step into a config value: an object key or an array index. */
export type KeyPathSegment = string | number;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/**
 * Render a key path the way config errors name it: `protocols[0].contracts[1].address`.
 * Keys that are not plain identifiers are quoted (`actions["a.b"]`); the root is `(root)`.
 */
export function formatKeyPath(segments: readonly KeyPathSegment[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out === "" ? "(root)" : out;
}

/**
 * Turn a JSON Pointer (RFC 6901, as found in validation errors' `instancePath`) into key path segments,
 * walking `value` so that a segment is an index only where the value really is an array (an object key
 * `"0"` stays a key).
 */
export function pointerToSegments(pointer: string, value: unknown): KeyPathSegment[] {
  if (pointer === "" || pointer === "/") return [];
  const segments: KeyPathSegment[] = [];
  let current: unknown = value;
  for (const raw of pointer.replace(/^\//, "").split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(current) && /^\d+$/.test(key)) {
      segments.push(Number(key));
      current = current[Number(key)];
    } else {
      segments.push(key);
      current = isRecord(current) ? current[key] : undefined;
    }
  }
  return segments;
}
