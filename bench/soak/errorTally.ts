/** Errors of a soak run counted by kind, with the first few details of each kept for the report. */
export type ErrorTally = {
  add(kind: string, detail: string): void;
  /** kind -> count, in the order kinds first occurred */
  counts(): Map<string, number>;
  /** the first details of a kind (at most 3) */
  examples(kind: string): readonly string[];
  total(): number;
};

export function createErrorTally(): ErrorTally {
  const counts = new Map<string, number>();
  const examples = new Map<string, string[]>();
  return {
    add(kind, detail) {
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
      const list = examples.get(kind) ?? [];
      if (list.length < 3) list.push(detail.slice(0, 300));
      examples.set(kind, list);
    },
    counts: () => new Map(counts),
    examples: (kind) => examples.get(kind) ?? [],
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
  };
}
