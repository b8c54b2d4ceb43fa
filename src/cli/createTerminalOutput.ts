/** Erase the current line and return to its start (ANSI "erase in line", whole line). */
const CLEAR_LINE = "\r\x1b[2K";

/**
 * Log lines and one status line that updates in place at the bottom of a terminal. Writing a log line
 * erases the status line, prints the log line and draws the status line again under it, so the two never
 * interleave. The status line is cut to the terminal's width: a wrapped line could not be erased.
 */
export type TerminalOutput = {
  /** Write text (whole lines, ending in a newline). */
  write(text: string): void;
  /** Show `line` as the status line, or remove it (null). */
  status(line: string | null): void;
};

export function createTerminalOutput(out: {
  write(text: string): unknown;
  readonly columns?: number | undefined;
}): TerminalOutput {
  let current: string | null = null;
  const toWidth = (line: string) => {
    // A terminal that reports no size (0 columns) is taken as the classic 80.
    const width = out.columns || 80;
    return line.length < width ? line : `${line.slice(0, Math.max(0, width - 2))}…`;
  };
  return {
    write(text) {
      out.write(current === null ? text : `${CLEAR_LINE}${text}${current}`);
    },
    status(line) {
      const next = line === null ? null : toWidth(line);
      if (next === current) return;
      out.write(next === null ? CLEAR_LINE : `${CLEAR_LINE}${next}`);
      current = next;
    },
  };
}
