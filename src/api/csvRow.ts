/** A CSV field as the exports write it: text as is, numbers as JSON writes them, booleans `true`/`false`, null empty. */
export type CsvValue = string | number | bigint | boolean | null;

const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One RFC 4180 record with its CRLF: fields separated by commas, a field holding a comma, a double quote, CR
 * or LF enclosed in double quotes with its double quotes doubled.
 */
export function csvRow(fields: readonly CsvValue[]): string {
  let line = "";
  for (let i = 0; i < fields.length; i++) {
    const value = fields[i];
    const text =
      value === null || value === undefined ? "" : typeof value === "string" ? value : String(value);
    if (i > 0) line += ",";
    line += NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  }
  return `${line}\r\n`;
}
