import type { Hex } from "viem";

/** A seeded source of randomness with the few draws the fault simulation needs. */
export type Random = {
  /** uniform in [0, 1) */
  next(): number;
  /** an integer in [min, max], both included */
  int(min: number, max: number): number;
  /** true with probability `p` */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** one of `weights`' keys, each with probability proportional to its weight (zero weights never) */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
  /** a shuffled copy */
  shuffle<T>(items: readonly T[]): T[];
  /** 32 random bytes as a lowercase 0x-hex string (a hash no chain knows) */
  hash(): Hex;
};

/**
 * mulberry32: a tiny 32-bit PRNG (Tommy Ettinger's, public domain), good enough to replay a fault schedule
 * from its seed. Not for anything cryptographic.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A {@link Random} drawing from `mulberry32(seed)`: the same seed gives the same sequence of draws. */
export function seededRandom(seed: number): Random {
  const next = mulberry32(seed);
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick(items) {
      if (items.length === 0) throw new Error("pick from an empty list");
      return items[int(0, items.length - 1)]!;
    },
    weighted(weights) {
      const entries = (Object.entries(weights) as [keyof typeof weights, number][]).filter(([, w]) => w > 0);
      const total = entries.reduce((sum, [, w]) => sum + w, 0);
      if (total <= 0) throw new Error("no positive weight");
      let r = next() * total;
      for (const [key, w] of entries) {
        r -= w;
        if (r < 0) return key;
      }
      return entries.at(-1)![0];
    },
    shuffle(items) {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = int(0, i);
        [copy[i], copy[j]] = [copy[j]!, copy[i]!];
      }
      return copy;
    },
    hash() {
      let out = "0x";
      for (let i = 0; i < 8; i++)
        out += Math.floor(next() * 2 ** 32)
          .toString(16)
          .padStart(8, "0");
      return out as Hex;
    },
  };
}
