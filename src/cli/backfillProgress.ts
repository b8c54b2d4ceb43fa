/** What the progress line is computed from: the indexer's status and the transactions stored so far. */
export type BackfillSample = {
  /** the last committed block, null before the first commit */
  indexedBlock: number | null;
  /** the block the indexer is heading for (the head minus the confirmations), null before it asked */
  target: number | null;
  /** transactions stored by the poller since the process started */
  transactions: number;
  /** when the sample was taken (ms) */
  now: number;
};

export type BackfillFigures = {
  done: number;
  toDo: number;
  transactionsPerSecond: number | null;
  etaSeconds: number | null;
};

/** A backfill shows a progress line once it has at least this many blocks to go (not every new block). */
export const BACKFILL_MIN_BLOCKS = 10;
/** Rates are shown once a backfill has run this long (an earlier figure would be noise). */
const MIN_ELAPSED_MS = 1_000;

/**
 * Follows the indexer from sample to sample: a backfill starts when it is `minBlocks` or more behind its
 * target and ends when it has caught up. While one runs, `sample` returns its figures (blocks done since it
 * started, blocks to do, transactions per second and the ETA at the rate so far); otherwise null.
 */
export function createBackfillMeter(minBlocks = BACKFILL_MIN_BLOCKS) {
  let start: { block: number; transactions: number; at: number } | null = null;
  return {
    sample(s: BackfillSample): BackfillFigures | null {
      if (s.indexedBlock === null || s.target === null) return null;
      const toDo = Math.max(0, s.target - s.indexedBlock);
      if (!start) {
        if (toDo < minBlocks) return null;
        start = { block: s.indexedBlock, transactions: s.transactions, at: s.now };
      }
      if (toDo === 0) {
        start = null;
        return null;
      }
      const done = s.indexedBlock - start.block;
      const elapsedMs = s.now - start.at;
      if (elapsedMs < MIN_ELAPSED_MS) return { done, toDo, transactionsPerSecond: null, etaSeconds: null };
      const seconds = elapsedMs / 1000;
      const blocksPerSecond = done / seconds;
      return {
        done,
        toDo,
        transactionsPerSecond: (s.transactions - start.transactions) / seconds,
        etaSeconds: blocksPerSecond > 0 ? toDo / blocksPerSecond : null,
      };
    },
  };
}

/**
 * `1234.6` → `1,235`. Not `Intl.NumberFormat`: creating one reads ICU's locale data, about 5 MB of the node
 * binary's pages resident for the life of the process (docs/performance.md, "First start"), for a comma.
 */
export function formatCount(value: number): string {
  const digits = Math.round(value).toString();
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** `2m 05s`, `1h 02m`, `45s`; `--` while unknown. */
export function formatEta(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return "--";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** The live line: `backfill  1,234 blocks done · 5,678 to do · 42 tx/s · ETA 2m 13s`. */
export function progressLine(f: BackfillFigures): string {
  const rate = f.transactionsPerSecond === null ? "--" : formatCount(f.transactionsPerSecond);
  return (
    `backfill  ${formatCount(f.done)} blocks done · ${formatCount(f.toDo)} to do · ` +
    `${rate} tx/s · ETA ${formatEta(f.etaSeconds)}`
  );
}
