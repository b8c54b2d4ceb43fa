/** A 32-byte transaction hash as providers send it (any case). */
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/** Whether `value` is a 0x-prefixed 32-byte hex string. */
export function isTxHash(value: unknown): value is string {
  return typeof value === "string" && TX_HASH.test(value);
}

/**
 * Visit every `(key, value)` pair of every object inside a parsed JSON document, depth first, in document
 * order. Iterative, so a deeply nested body (up to the 1 MiB limit) cannot overflow the stack. An array is
 * visited as the value of its key (`("logs", [...])`), then the pairs of the objects inside it.
 */
export function walkJson(root: unknown, visit: (key: string, value: unknown) => void): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push(node[i]);
    } else if (node !== null && typeof node === "object") {
      const entries = Object.entries(node);
      for (const [key, value] of entries) visit(key, value);
      for (let i = entries.length - 1; i >= 0; i--) stack.push(entries[i]![1]);
    }
  }
}

/**
 * Collect transaction hashes from a parsed document: `pick(key, value)` returns the hash (or hashes) a pair
 * names, if any. Hashes come back lowercase, each once, in document order; anything that is not 32-byte hex
 * is skipped.
 */
export function collectTxHashes(
  root: unknown,
  pick: (key: string, value: unknown) => unknown,
): `0x${string}`[] {
  const seen = new Set<`0x${string}`>();
  walkJson(root, (key, value) => {
    const picked = pick(key, value);
    for (const candidate of Array.isArray(picked) ? picked : [picked]) {
      if (isTxHash(candidate)) seen.add(candidate.toLowerCase() as `0x${string}`);
    }
  });
  return [...seen];
}
