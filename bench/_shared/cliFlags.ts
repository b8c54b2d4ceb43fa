import { NonRetryableError } from "../../src/internal/errors.ts";

/** Reads the value of the flag being handled (the next argument) in the form the flag takes. */
export type FlagReader = {
  /** the value as given */
  text(): string;
  /** the value as an integer of at least `min` (default 1) */
  integer(min?: number): number;
  /** the value as a comma-separated list, each one of `allowed` (`noun` names them in the error) */
  oneOf<T extends string>(allowed: readonly T[], noun: string): T[];
};

/**
 * Walk a benchmark's command line flag by flag, the part every `npm run bench:*` parser shares: `onFlag`
 * handles one flag (reading its value through `read`) and returns false for a flag it does not know. A
 * missing or malformed value, an unknown flag and `--help`/`-h` throw a NonRetryableError with `usage`.
 */
export function parseFlags(
  argv: readonly string[],
  usage: string,
  onFlag: (flag: string, read: FlagReader) => boolean,
): void {
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === "--help" || flag === "-h") throw new NonRetryableError(usage);
    const text = () => {
      const value = argv[++i];
      if (value === undefined) throw new NonRetryableError(`${flag} needs a value\n${usage}`);
      return value;
    };
    const read: FlagReader = {
      text,
      integer(min = 1) {
        const value = text();
        const n = Number(value);
        if (!Number.isSafeInteger(n) || n < min) {
          const what = min === 1 ? "a positive integer" : `an integer >= ${min}`;
          throw new NonRetryableError(`${flag}: not ${what}: ${value}`);
        }
        return n;
      },
      oneOf(allowed, noun) {
        return text()
          .split(",")
          .map((name) => {
            if (!(allowed as readonly string[]).includes(name)) {
              throw new NonRetryableError(`${flag}: unknown ${noun} ${name} (${allowed.join(", ")})`);
            }
            return name as (typeof allowed)[number];
          });
      },
    };
    if (!onFlag(flag, read)) throw new NonRetryableError(`unknown argument ${flag}\n${usage}`);
  }
}
