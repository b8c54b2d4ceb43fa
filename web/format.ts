/**
 * The one place where numbers, amounts, times and addresses become text (STYLE.md, "The web app"). Each
 * formatter that rounds returns the exact value too, which the page puts in a `title` (shown on hover).
 */

export type Formatted = { text: string; exact: string };

const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const usdCompact = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  notation: "compact",
  maximumFractionDigits: 2,
});
const usdExact = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 6,
});

/** Thousands separators on an integer given as a number, bigint or decimal string: `1234567` -> `1,234,567`. */
export function formatInteger(value: number | bigint | string): string {
  if (typeof value === "number") return integer.format(value);
  const digits = value.toString();
  const negative = digits.startsWith("-");
  const body = negative ? digits.slice(1) : digits;
  return `${negative ? "-" : ""}${body.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}`;
}

/**
 * A uint256 amount (decimal string) scaled by `decimals`, exactly: `amount / 10^decimals` with separators,
 * shown with at most `maxFraction` fraction digits (cut, never rounded up: the exact value is in `exact`).
 */
export function formatUnits(amount: string | bigint, decimals: number, maxFraction = 4): Formatted {
  const raw = BigInt(amount);
  const negative = raw < 0n;
  const abs = negative ? -raw : raw;
  const base = 10n ** BigInt(decimals);
  const whole = formatInteger(abs / base);
  const fraction = decimals > 0 ? (abs % base).toString().padStart(decimals, "0").replace(/0+$/, "") : "";
  const sign = negative ? "-" : "";
  const exact = `${sign}${whole}${fraction ? `.${fraction}` : ""}`;
  const shown = fraction.slice(0, maxFraction).replace(/0+$/, "");
  let text = `${sign}${whole}${shown ? `.${shown}` : ""}`;
  if (shown.length < fraction.length && abs < base && !shown)
    text = `<${sign}0.${"0".repeat(maxFraction - 1)}1`;
  else if (shown.length < fraction.length) text = `~${text}`;
  return { text, exact };
}

/** Native currency (wei) as ETH. */
export function formatEther(wei: string | bigint): Formatted {
  const { text, exact } = formatUnits(wei, 18, 6);
  return { text: `${text} ETH`, exact: `${exact} ETH (${formatInteger(wei)} wei)` };
}

/** A transaction fee: gasUsed x effective gas price, in ETH. */
export function formatFee(gasUsed: string, gasPrice: string): Formatted {
  return formatEther(BigInt(gasUsed) * BigInt(gasPrice));
}

/** USD, compact (`$1.23M`), with the exact figure; `—` when unknown. */
export function formatUsd(value: number | null | undefined): Formatted {
  if (value === null || value === undefined || !Number.isFinite(value)) {
    return { text: "—", exact: "not priced" };
  }
  const exact = usdExact.format(value);
  if (value !== 0 && Math.abs(value) < 0.01) return { text: "<$0.01", exact };
  return {
    text: Math.abs(value) < 1000 ? usdExact.format(Number(value.toFixed(2))) : usdCompact.format(value),
    exact,
  };
}

/** A price per token: more digits than a total, since prices of small tokens matter to the cent's fraction. */
export function formatPrice(value: number | null | undefined): Formatted {
  if (value === null || value === undefined || !Number.isFinite(value)) {
    return { text: "no price", exact: "no price tier answered" };
  }
  const text = new Intl.NumberFormat("en-US", {
    style: "currency",
    currency: "USD",
    maximumSignificantDigits: 6,
  }).format(value);
  return { text, exact: String(value) };
}

/** A share (0..1) as a percentage: `0.2534` -> `25.34%`. */
export function formatShare(share: number): Formatted {
  const percent = share * 100;
  const text = percent > 0 && percent < 0.01 ? "<0.01%" : `${percent.toFixed(2)}%`;
  return { text, exact: `${percent}%` };
}

/** `0x1234…abcd`: enough of a hash or address to tell it apart, the whole in `exact`. */
export function shortHex(hex: string, keep = 6): Formatted {
  if (hex.length <= keep * 2 + 3) return { text: hex, exact: hex };
  return { text: `${hex.slice(0, keep)}…${hex.slice(-4)}`, exact: hex };
}

/** `2026-11-21 08:00:00 UTC` */
export function formatTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** `12 s ago`, `5 min ago`, `3 h ago`, `2 d ago` (`in …` for a clock slightly ahead). */
export function formatAge(iso: string, now: number): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  const abs = Math.abs(seconds);
  let text: string;
  if (abs < 60) text = `${abs} s`;
  else if (abs < 3600) text = `${Math.floor(abs / 60)} min`;
  else if (abs < 86_400) text = `${Math.floor(abs / 3600)} h`;
  else text = `${Math.floor(abs / 86_400)} d`;
  return seconds < 0 ? `in ${text}` : `${text} ago`;
}

/** A decoded argument as text: bigints come as decimal strings, arrays and tuples as JSON. */
export function formatArg(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return String(value);
  if (value === null || value === undefined) return "";
  return JSON.stringify(value);
}

/** A chart axis value: `12.3k`, `4.5M`. */
export function formatCompact(value: number): string {
  return new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 }).format(value);
}
